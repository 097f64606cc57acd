import { sql } from 'drizzle-orm';
import { boolean, index, pgSchema, text, timestamp } from 'drizzle-orm/pg-core';

/** The Postgres schema holding this package's table (and its migrations table). */
export const continuationSchema = pgSchema('x_continuation');

/**
 * One row per interaction. `record` is the suspension's persisted snake_case JSON, kept
 * as text so it is stored byte for byte as the file store writes it; `resolved` is the
 * authority on whether it was consumed (the flag inside `record` stays as saved).
 * `session_id`, `run_id` and `created_at` are copies for filtering and ordering.
 */
export const suspensions = continuationSchema.table(
  'suspensions',
  {
    interactionId: text('interaction_id').primaryKey(),
    sessionId: text('session_id'),
    runId: text('run_id'),
    record: text('record').notNull(),
    resolved: boolean('resolved').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    resolvedAt: timestamp('resolved_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('suspensions_unresolved_created_idx').on(t.createdAt).where(sql`${t.resolved} = false`),
    index('suspensions_unresolved_session_idx')
      .on(t.sessionId, t.createdAt)
      .where(sql`${t.resolved} = false`),
    index('suspensions_unresolved_run_idx')
      .on(t.runId, t.createdAt)
      .where(sql`${t.resolved} = false`),
  ],
);

/** A row of {@link suspensions}. */
export type SuspensionRow = typeof suspensions.$inferSelect;
