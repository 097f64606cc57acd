import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgSchema,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

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

/**
 * One row per unattended run: a conversation's turn, from the question it first stopped on
 * until it completes, is cancelled or fails. `interaction_id` is the continuation the run
 * waits on or resumes; `due_at` is when it may be claimed (ready: from then on, after a
 * retry's backoff; running: when its lease expires; waiting: at its question's deadline,
 * `deadline_at`, or at an earlier due time of the wait such as a reminder, or never), so one partial index finds all claimable work and never reads
 * finished runs or runs waiting without a deadline. Every index is written on every
 * update of a run (its status changes, so no update is HOT): they are kept few, and
 * partial where a lookup needs only some runs. `lease_holder` names the process that holds
 * a running run's lease (its advisory lock, see `takeHolderLock`); `lost_attempts` counts
 * the attempts that ended with their worker gone.
 */
export const runs = continuationSchema.table(
  'runs',
  {
    runId: text('run_id').primaryKey(),
    conversationId: text('conversation_id').notNull(),
    status: text('status', {
      enum: ['running', 'waiting', 'ready', 'completed', 'cancelled', 'failed'],
    }).notNull(),
    interactionId: text('interaction_id'),
    input: jsonb('input'),
    attempts: integer('attempts').notNull().default(0),
    lostAttempts: integer('lost_attempts').notNull().default(0),
    lastError: text('last_error'),
    leaseOwner: text('lease_owner'),
    leaseHolder: integer('lease_holder'),
    dueAt: timestamp('due_at', { withTimezone: true, mode: 'date' }),
    // The deadline of the question a waiting run waits on (then also its due_at): from then
    // on a worker claims it to apply the deadline. An answer that readies the run clears it.
    deadlineAt: timestamp('deadline_at', { withTimezone: true, mode: 'date' }),
    meta: jsonb('meta'),
    transcript: text('transcript'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('runs_claimable_idx')
      .on(t.dueAt, t.runId)
      .where(sql`${t.status} in ('ready', 'running', 'waiting') and ${t.dueAt} is not null`),
    // Only a waiting run is looked up by its question (an answer readies it); one run per wait.
    uniqueIndex('runs_waiting_interaction_idx')
      .on(t.interactionId)
      .where(sql`${t.status} = 'waiting'`),
    index('runs_conversation_idx').on(t.conversationId, t.createdAt),
    index('runs_created_idx').on(t.createdAt),
    // Failed runs are rare and wait for a person: listing them must not scan the others.
    index('runs_failed_idx').on(t.createdAt).where(sql`${t.status} = 'failed'`),
    check(
      'runs_status_check',
      sql`${t.status} in ('running', 'waiting', 'ready', 'completed', 'cancelled', 'failed')`,
    ),
  ],
);

/** A row of {@link runs}. */
export type RunRow = typeof runs.$inferSelect;
