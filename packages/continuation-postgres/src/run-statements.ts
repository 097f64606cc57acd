import { lazyStatements, prepareOnce, statementBuilder } from '@x/postgres-kit';
import {
  type AnyColumn,
  and,
  desc,
  eq,
  inArray,
  lt,
  type Placeholder,
  type SQL,
  sql,
} from 'drizzle-orm';
import type { ContinuationDatabase } from './database.js';
import { type RunRow, runs, suspensions } from './schema.js';

// Every statement of the run queue, each by name: the hot ones prepared once per queue
// (preparedRunStatements), the others built per call (runStatements), and the fragments
// they share. runs.ts runs them and turns their rows into records.

/**
 * Where a run stands: `running` (a worker holds its lease), `waiting` (on a person's
 * answer), `ready` (answered, or due for a retry: any worker may claim it), and the final
 * `completed`, `cancelled` and `failed` (retries used up; `retry` makes it ready again).
 */
export type RunStatus = 'running' | 'waiting' | 'ready' | 'completed' | 'cancelled' | 'failed';

/**
 * The channel {@link PostgresRunQueue.release} notifies (with the run id) when it gives a run
 * back: a waiting worker that LISTENs to it claims the run at once instead of at its next poll.
 */
export const RUN_RELEASED_CHANNEL = 'x_continuation_run_released';

/**
 * The channel a run queue's write notifies (with the run id) when it makes a run claimable
 * without a claim: ready now (an answer's `markReady`, a `retry`) or waiting with a due time
 * (`create`, `finish` to `waiting`). A worker that LISTENs to it and to
 * {@link RUN_RELEASED_CHANNEL} needs no other look at the queue between its claims.
 */
export const RUN_READY_CHANNEL = 'x_continuation_run_ready';

/** Notifies {@link RUN_READY_CHANNEL} with the written run's id when `when` holds (default always). */
function notifyReady(when?: SQL): SQL {
  const notify = sql`pg_notify(${RUN_READY_CHANNEL}, ${runs.runId})`;
  return when ? sql`case when ${when} then ${notify} end` : notify;
}

/** What an answer sets on the run that waited on it: ready now, with `input` for the resume. */
function readiedWith(input: SQL | Placeholder) {
  return {
    status: 'ready' as const,
    input,
    dueAt: sql`now()`,
    deadlineAt: null,
    updatedAt: sql`now()`,
  };
}

// Written in the SQL, not bound: a generic plan may then use the partial index
// runs_waiting_interaction_idx, so a prepared statement is not planned again at every call.
const waiting = sql`${runs.status} = 'waiting'`;

/** The statuses a run never leaves by itself. */
export const FINISHED_RUN_STATUSES: readonly RunStatus[] = ['completed', 'cancelled', 'failed'];

/** The columns of a run that every read of it returns as they are (all but its times). */
const runFields = {
  runId: runs.runId,
  conversationId: runs.conversationId,
  status: runs.status,
  interactionId: runs.interactionId,
  input: runs.input,
  attempts: runs.attempts,
  lostAttempts: runs.lostAttempts,
  lastError: runs.lastError,
  leaseOwner: runs.leaseOwner,
  meta: runs.meta,
};

/** The columns a run is read with (all but its transcript and holder key). */
export const runColumns = {
  ...runFields,
  dueAt: runs.dueAt,
  deadlineAt: runs.deadlineAt,
  createdAt: runs.createdAt,
  updatedAt: runs.updatedAt,
  finishedAt: runs.finishedAt,
};

/** A run as {@link runColumns} read it. */
export type SelectedRun = Omit<RunRow, 'transcript' | 'leaseHolder'>;

/** The first key of every holder lock (two-key advisory locks): "runs" in ASCII. */
export const HOLDER_LOCK_SPACE = 0x72756e73;

/**
 * True when nobody holds the lock of a run's lease holder and it is not `own` (the asker's):
 * its process is gone. A shared try-lock, held to the end of the statement's transaction:
 * it fails only against the holder's exclusive session lock, never against another asker's.
 */
/**
 * The runs a claim may take: ready, running, or waiting with a deadline. Written as the
 * partial index `runs_claimable_idx` is, so that the planner reads only that index.
 */
const claimable = sql`${runs.status} in ('ready', 'running', 'waiting') and ${runs.dueAt} is not null`;

function holderGone(own: SQL | Placeholder): SQL {
  const holder = runs.leaseHolder;
  return sql`(${holder} is not null and ${holder} is distinct from ${own}::integer and pg_try_advisory_xact_lock_shared(${HOLDER_LOCK_SPACE}, ${holder}))`;
}

/** The fence of every write a worker makes to its run: still leased to it, still running. */
function heldBy(runId: string | Placeholder, owner: string | Placeholder): SQL {
  return and(eq(runs.runId, runId), eq(runs.leaseOwner, owner), eq(runs.status, 'running')) as SQL;
}

/**
 * The hot statements, built once per queue on first use and run as named prepared
 * statements: one round trip each on postgres.js (PGlite ignores the names; a
 * `prepare: false` client wins).
 */
export function preparedRunStatements(db: ContinuationDatabase) {
  const p = sql.placeholder;
  const lease = sql`now() + ${p('leaseMs')} * interval '1 millisecond'`;
  // A completed run has no last error: one of a retried attempt would read as its outcome.
  const completed = {
    status: 'completed' as const,
    lastError: null,
    transcript: sql`${p('transcript')}`,
    dueAt: null,
    finishedAt: sql`now()`,
    updatedAt: sql`now()`,
  };
  return lazyStatements({
    // The claim commits asynchronously (unless told otherwise): losing it in a crash only
    // makes the run claimable again, and the fenced terminal write refuses the worker that
    // held it.
    claim: () =>
      db
        .update(runs)
        .set({
          status: 'running',
          leaseOwner: sql`${p('owner')}`,
          dueAt: lease,
          attempts: sql`${runs.attempts} + 1`,
          // SET reads the row as it was: a run taken while running lost its worker.
          lostAttempts: sql`${runs.lostAttempts} + (${runs.status} = 'running')::int`,
          leaseHolder: sql`${p('holder')}::integer`,
          updatedAt: sql`now()`,
        })
        .where(
          and(
            eq(
              runs.runId,
              // A due run ends the index scan before any holder is looked at; only when none
              // is due are the live leases' holders tried, in due order.
              sql`(select ${runs.runId} from ${runs} where ${claimable} and (${runs.dueAt} <= now() or (${runs.status} = 'running' and ${holderGone(p('holder'))})) and not ${runs.runId} = any(${p('skip')}::text[]) order by ${runs.dueAt}, ${runs.runId} limit 1 for update skip locked)`,
            ),
            sql`set_config('synchronous_commit', ${p('commit')}, true) is not null`,
          ),
        )
        .returning({
          ...runColumns,
          // Written out: drizzle leaves RETURNING's columns unqualified, which the subquery
          // would read as its own.
          record: sql<
            string | null
          >`(select s.record from x_continuation.suspensions s where s.interaction_id = "x_continuation"."runs"."interaction_id" and not s.resolved)`,
          // A subquery sees the row as the statement found it: its due time before the claim.
          claimableAt:
            sql<Date | null>`(select r.due_at from x_continuation.runs r where r.run_id = "x_continuation"."runs"."run_id")`.mapWith(
              runs.dueAt,
            ),
          // The next due time of the other claimable runs, through the partial index: a
          // listening worker sleeps until then after this run instead of claiming again.
          nextDueMs: sql<
            number | null
          >`(select ceil(extract(epoch from (min(r.due_at) - now())) * 1000)::float8 from x_continuation.runs r where r.status in ('ready', 'running', 'waiting') and r.due_at is not null and r.run_id <> "x_continuation"."runs"."run_id")`,
        })
        .prepare('x_runs_claim'),
    renew: () =>
      db
        .update(runs)
        .set({ dueAt: lease, updatedAt: sql`now()` })
        .where(heldBy(p('runId'), p('owner')))
        .returning({ runId: runs.runId })
        .prepare('x_runs_renew'),
    // The attempt the claim counted is taken back: giving a run up is not a failure of it.
    release: () =>
      db
        .update(runs)
        .set({
          status: 'ready',
          dueAt: sql`now()`,
          attempts: sql`greatest(${runs.attempts} - 1, 0)`,
          updatedAt: sql`now()`,
        })
        .where(heldBy(p('runId'), p('owner')))
        .returning({
          runId: runs.runId,
          notified: sql`pg_notify(${RUN_RELEASED_CHANNEL}, ${runs.runId})`,
        })
        .prepare('x_runs_release'),
    complete: () =>
      db
        .update(runs)
        .set(completed)
        .where(heldBy(p('runId'), p('owner')))
        .returning({ runId: runs.runId })
        .prepare('x_runs_complete'),
    // The run row is locked first (FOR UPDATE in the CTE), so that a worker that lost its
    // lease resolves nothing; the run completes only if its continuation was resolved here.
    completeResolving: () => {
      const resolved = db
        .$with('resolved', { interactionId: suspensions.interactionId })
        .as(
          sql`update ${suspensions} set resolved = true, resolved_at = now(), updated_at = now() where ${suspensions.interactionId} = (select ${runs.interactionId} from ${runs} where ${heldBy(p('runId'), p('owner'))} for update) and ${suspensions.resolved} = false returning ${suspensions.interactionId}`,
        );
      return db
        .with(resolved)
        .update(runs)
        .set(completed)
        .where(and(heldBy(p('runId'), p('owner')), sql`exists (select 1 from ${resolved})`))
        .returning({ runId: runs.runId })
        .prepare('x_runs_complete_resolving');
    },
  });
}

/**
 * The columns of a run as a statement compiled once per process returns them (its rows are
 * the driver's): times as epoch milliseconds, the same from every driver.
 */
const runReturning = {
  ...runFields,
  dueMs: epochMs(runs.dueAt).as('due_ms'),
  deadlineMs: epochMs(runs.deadlineAt).as('deadline_ms'),
  createdMs: epochMs(runs.createdAt).as('created_ms'),
  updatedMs: epochMs(runs.updatedAt).as('updated_ms'),
  finishedMs: epochMs(runs.finishedAt).as('finished_ms'),
};

function epochMs(column: AnyColumn) {
  return sql<number | null>`(extract(epoch from ${column}) * 1000)::float8`;
}

const dateOf = (ms: unknown) => (ms === null || ms === undefined ? null : new Date(Number(ms)));

/** A run from a row of {@link runReturning}. */
export function runOfRow(row: Record<string, unknown>): SelectedRun {
  return {
    runId: String(row.run_id),
    conversationId: String(row.conversation_id),
    status: row.status as RunStatus,
    interactionId: (row.interaction_id as string | null) ?? null,
    input: row.input ?? null,
    attempts: Number(row.attempts),
    lostAttempts: Number(row.lost_attempts),
    lastError: (row.last_error as string | null) ?? null,
    leaseOwner: (row.lease_owner as string | null) ?? null,
    meta: row.meta ?? null,
    dueAt: dateOf(row.due_ms),
    deadlineAt: dateOf(row.deadline_ms),
    createdAt: dateOf(row.created_ms) ?? new Date(Number.NaN),
    updatedAt: dateOf(row.updated_ms) ?? new Date(Number.NaN),
    finishedAt: dateOf(row.finished_ms),
  };
}

/**
 * The statements of every queue's hot writes inside its callers' transactions, compiled once
 * per process (a queue is made per transaction) and run with `runPrepared`.
 */
export const compiledRunStatements = {
  // JSON text or null, passed as is: drizzle would encode a null `meta` as the JSON `null`.
  create: prepareOnce(() => {
    const p = sql.placeholder;
    return statementBuilder
      .insert(runs)
      .values({
        runId: p('runId'),
        conversationId: p('conversationId'),
        status: p('status'),
        interactionId: sql`${p('interactionId')}`,
        dueAt: sql`${p('dueAt')}::timestamptz`,
        deadlineAt: sql`${p('deadlineAt')}::timestamptz`,
        meta: sql`${p('meta')}`,
        transcript: sql`${p('transcript')}`,
        finishedAt: sql`case when ${p('finished')} then now() end`,
      })
      .returning({ notified: notifyReady(sql`${runs.dueAt} is not null`).as('notified') })
      .getSQL();
  }),
  markReady: prepareOnce(() => {
    const p = sql.placeholder;
    return statementBuilder
      .update(runs)
      .set(readiedWith(p('input')))
      .where(and(eq(runs.interactionId, p('interactionId')), waiting))
      .returning({ ...runReturning, notified: notifyReady().as('notified') })
      .getSQL();
  }),
};

/** The end of a run that {@link runStatements.finish} writes (a completed one is prepared). */
export type FinishedEnd =
  | {
      status: 'waiting';
      interactionId: string;
      deadlineAt?: Date | undefined;
      dueAt?: Date | undefined;
    }
  | { status: 'cancelled' | 'failed'; lastError: string };

/**
 * The statements whose shape depends on the call (a list's filters, a retry's backoff), or
 * that run too seldom to be worth preparing, each by name: `(db, ...params) => query`.
 */
export const runStatements = {
  /** Takes holder lock `key` for the session if free: `granted`. */
  takeHolderLock: (db: ContinuationDatabase, key: number) =>
    db.execute(sql`select pg_try_advisory_lock(${HOLDER_LOCK_SPACE}, ${key}::integer) as granted`),

  /** Makes the waiting runs of many answers ready, `entries` a JSON array of `{interaction_id, input}`. */
  markReadyMany: (db: ContinuationDatabase, entries: string) =>
    db
      .update(runs)
      .set(readiedWith(sql`a.input`))
      .from(sql`jsonb_to_recordset(${entries}::jsonb) as a(interaction_id text, input jsonb)`)
      .where(and(sql`${runs.interactionId} = a.interaction_id`, waiting))
      .returning({ runId: runs.runId, notified: notifyReady().as('notified') }),

  /** `ms` until the next run is claimable by `holder`'s process (0: now), null when none is ready or running. */
  nextDue: (db: ContinuationDatabase, holder: number | undefined) => {
    const own = sql`${holder ?? null}`;
    return db.execute(
      sql`select ceil(extract(epoch from (min(case when ${runs.status} = 'running' and ${runs.dueAt} > now() and ${holderGone(own)} then now() else ${runs.dueAt} end) - now())) * 1000)::float8 as ms from ${runs} where ${claimable}`,
    );
  },

  /** The running runs' leases, soonest claimable first, each with whether its holder lives. */
  leases: (db: ContinuationDatabase, holder: number | undefined, limit: number) => {
    const own = sql`${holder ?? null}`;
    return db.execute(sql`
      select ${runs.runId} as run_id, ${runs.conversationId} as conversation_id,
        ${runs.leaseOwner} as owner, ${runs.dueAt} as expires_at,
        case when ${runs.leaseHolder} is null then 'unknown'
          when ${runs.leaseHolder} = ${own}::integer then 'self'
          when ${holderGone(own)} then 'gone' else 'alive' end as holder
      from ${runs} where ${runs.status} = 'running'
      order by ${runs.dueAt}, ${runs.runId} limit ${limit}`);
  },

  /** Ends a run held by `owner` other than completed: waiting again, cancelled or failed. */
  finish: (db: ContinuationDatabase, runId: string, owner: string, end: FinishedEnd) => {
    const set =
      end.status === 'waiting'
        ? {
            status: 'waiting' as const,
            interactionId: end.interactionId,
            input: null,
            attempts: 0,
            lostAttempts: 0,
            lastError: null,
            dueAt: end.dueAt ?? end.deadlineAt ?? null,
            deadlineAt: end.deadlineAt ?? null,
          }
        : { status: end.status, lastError: end.lastError, dueAt: null, finishedAt: sql`now()` };
    return db
      .update(runs)
      .set({ ...set, updatedAt: sql`now()` })
      .where(heldBy(runId, owner))
      .returning({
        runId: runs.runId,
        ...(end.status === 'waiting' && set.dueAt !== null ? { notified: notifyReady() } : {}),
      });
  },

  /** A failed attempt of a run held by `owner`: ready after `retryInMs`, or failed without it. */
  fail: (
    db: ContinuationDatabase,
    runId: string,
    owner: string,
    error: string,
    retryInMs: number | undefined,
  ) =>
    db
      .update(runs)
      .set({
        status: retryInMs === undefined ? 'failed' : 'ready',
        lastError: error,
        dueAt:
          retryInMs === undefined ? null : sql`now() + ${retryInMs} * interval '1 millisecond'`,
        finishedAt: retryInMs === undefined ? sql`now()` : null,
        updatedAt: sql`now()`,
      })
      .where(heldBy(runId, owner))
      .returning({ runId: runs.runId }),

  /** Fails a run held by `owner` without counting its claim as an attempt. */
  giveUp: (db: ContinuationDatabase, runId: string, owner: string, error: string) =>
    db
      .update(runs)
      .set({
        status: 'failed',
        attempts: sql`${runs.attempts} - 1`,
        lastError: error,
        dueAt: null,
        finishedAt: sql`now()`,
        updatedAt: sql`now()`,
      })
      .where(heldBy(runId, owner))
      .returning({ runId: runs.runId }),

  /** Makes a failed run ready again, its attempts counted from zero. */
  retry: (db: ContinuationDatabase, runId: string) =>
    db
      .update(runs)
      .set({
        status: 'ready',
        attempts: 0,
        lostAttempts: 0,
        dueAt: sql`now()`,
        finishedAt: null,
        updatedAt: sql`now()`,
      })
      .where(and(eq(runs.runId, runId), eq(runs.status, 'failed')))
      .returning({ ...runColumns, notified: notifyReady() }),

  /** Cancels every unfinished run of a conversation. */
  cancelConversation: (db: ContinuationDatabase, conversationId: string, reason: string) =>
    db
      .update(runs)
      .set({
        status: 'cancelled',
        lastError: reason,
        leaseOwner: null,
        dueAt: null,
        finishedAt: sql`now()`,
        updatedAt: sql`now()`,
      })
      .where(
        and(
          eq(runs.conversationId, conversationId),
          inArray(runs.status, ['running', 'waiting', 'ready']),
        ),
      )
      .returning({ runId: runs.runId }),

  /** One run. */
  get: (db: ContinuationDatabase, runId: string) =>
    db.select(runColumns).from(runs).where(eq(runs.runId, runId)).limit(1),

  /** These runs. */
  getMany: (db: ContinuationDatabase, runIds: readonly string[]) =>
    db
      .select(runColumns)
      .from(runs)
      .where(inArray(runs.runId, [...runIds])),

  /** Runs newest first, optionally of one conversation and/or in one status. */
  list: (
    db: ContinuationDatabase,
    filter: { conversationId?: string | undefined; status?: RunStatus | undefined },
    limit: number,
  ) => {
    const conditions: SQL[] = [];
    if (filter.conversationId !== undefined)
      conditions.push(eq(runs.conversationId, filter.conversationId));
    if (filter.status !== undefined) conditions.push(eq(runs.status, filter.status));
    return db
      .select(runColumns)
      .from(runs)
      .where(and(...conditions))
      .orderBy(desc(runs.createdAt), desc(runs.runId))
      .limit(limit);
  },

  /** Whether a continuation is resolved (no row: it is gone). */
  suspensionResolved: (db: ContinuationDatabase, interactionId: string) =>
    db
      .select({ resolved: suspensions.resolved })
      .from(suspensions)
      .where(eq(suspensions.interactionId, interactionId)),

  /** A run's own transcript with the record of the continuation it last resumed. */
  transcript: (db: ContinuationDatabase, runId: string) =>
    db
      .select({
        transcript: runs.transcript,
        interactionId: runs.interactionId,
        record: suspensions.record,
      })
      .from(runs)
      .leftJoin(suspensions, eq(suspensions.interactionId, runs.interactionId))
      .where(eq(runs.runId, runId))
      .limit(1),

  /** How many runs finished before `cutoff`. */
  countFinishedBefore: (db: ContinuationDatabase, cutoff: Date) =>
    db.select({ count: sql<number>`count(*)::int` }).from(runs).where(finishedBefore(cutoff)),

  /** Deletes the runs that finished before `cutoff`. */
  purgeFinishedBefore: (db: ContinuationDatabase, cutoff: Date) =>
    db.delete(runs).where(finishedBefore(cutoff)).returning({ runId: runs.runId }),

  /** Runs counted by status, and the running ones whose lease has not expired. */
  census: (db: ContinuationDatabase) =>
    db
      .select({
        status: runs.status,
        count: sql<number>`count(*)::int`,
        leased: sql<number>`(count(*) filter (where ${runs.status} = 'running' and ${runs.dueAt} > now()))::int`,
      })
      .from(runs)
      .groupBy(runs.status),

  /** The conversations with a run in one of `statuses`, each once. */
  conversationsWith: (db: ContinuationDatabase, statuses: readonly RunStatus[]) =>
    db
      .selectDistinct({ conversationId: runs.conversationId })
      .from(runs)
      .where(inArray(runs.status, [...statuses])),
};

function finishedBefore(cutoff: Date): SQL | undefined {
  return and(inArray(runs.status, [...FINISHED_RUN_STATUSES]), lt(runs.finishedAt, cutoff));
}
