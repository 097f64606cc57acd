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
 * waits on or resumes; `claimable_at` is when it may be claimed (ready: from then on, after a
 * retry's backoff; running: when its lease expires; waiting: at its question's deadline,
 * `deadline_at`, or at an earlier due time of the wait such as a reminder, or never), and a
 * run with one has a row of {@link runQueue} at that same time, which is how a claim finds it.
 * No index covers a column that an answer, a claim or a run's end changes, and the table
 * keeps room on each page (fillfactor 70), so that these updates are HOT: no index entry is
 * written, only the row. The columns that never change come first and those that do last,
 * so that an update's WAL record holds little more than what changed. `lease_holder` names
 * the process that holds a running run's lease (its advisory lock, see `takeHolderLock`);
 * `lost_attempts` counts the attempts that ended with their worker gone; `failed_at` is set
 * while the run is failed.
 */
export const runs = continuationSchema.table(
  'runs',
  {
    runId: text('run_id').primaryKey(),
    conversationId: text('conversation_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    meta: jsonb('meta'),
    interactionId: text('interaction_id'),
    status: text('status', {
      enum: ['running', 'waiting', 'ready', 'completed', 'cancelled', 'failed'],
    }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    lostAttempts: integer('lost_attempts').notNull().default(0),
    leaseHolder: integer('lease_holder'),
    claimableAt: timestamp('claimable_at', { withTimezone: true, mode: 'date' }),
    // The deadline of the question a waiting run waits on (then also its claimable_at): from
    // then on a worker claims it to apply the deadline. An answer that readies the run clears it.
    deadlineAt: timestamp('deadline_at', { withTimezone: true, mode: 'date' }),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
    failedAt: timestamp('failed_at', { withTimezone: true, mode: 'date' }),
    transcript: text('transcript'),
    lastError: text('last_error'),
    leaseOwner: text('lease_owner'),
    input: jsonb('input'),
  },
  (t) => [
    // An answer finds its run by the question (status 'waiting' is a filter, not a predicate).
    index('runs_interaction_idx').on(t.interactionId),
    index('runs_conversation_idx').on(t.conversationId, t.createdAt),
    index('runs_created_idx').on(t.createdAt),
    // Failed runs are rare and wait for a person: listing them must not scan the others.
    // failed_at, unlike status, changes only when a run fails or is retried.
    index('runs_failed_idx').on(t.createdAt).where(sql`${t.failedAt} is not null`),
    check(
      'runs_status_check',
      sql`${t.status} in ('running', 'waiting', 'ready', 'completed', 'cancelled', 'failed')`,
    ),
  ],
);

/** A row of {@link runs}. */
export type RunRow = typeof runs.$inferSelect;

/**
 * The claim order: one row per run that has a `claimable_at` (ready, running, or waiting with
 * a due time), at that same time, written in the same statement as the run; `leased` and
 * `lease_holder` say whether it is running and under which holder. A claim, `nextDueInMs` and
 * `leases` read it, through its one index in time order, and never a finished or plainly
 * waiting run; a run's end deletes its row, which writes no index entry. It has no key of its
 * own: every statement finds a run's row by its time, read from the run it holds locked.
 */
export const runQueue = continuationSchema.table(
  'run_queue',
  {
    runId: text('run_id').notNull(),
    claimableAt: timestamp('claimable_at', { withTimezone: true, mode: 'date' }).notNull(),
    leased: boolean('leased').notNull(),
    leaseHolder: integer('lease_holder'),
  },
  (t) => [index('run_queue_claimable_idx').on(t.claimableAt)],
);
