import { integer, pgSchema, text, timestamp } from 'drizzle-orm/pg-core';

/** The Postgres schema every table of this package lives in. */
export const sessionSchema = pgSchema('x_session');

/**
 * One row per thread id. `checkpoint` is the checkpoint's JSON text exactly as written
 * (`null` = deleted: the row stays as a tombstone so revisions never repeat); `version` is
 * the checkpoint format version, for queries and upgrades.
 */
export const checkpoints = sessionSchema.table('checkpoints', {
  threadId: text('thread_id').primaryKey(),
  revision: integer('revision').notNull(),
  version: integer('version'),
  checkpoint: text('checkpoint'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
