import { prepareOnce } from '@x/postgres-kit';
import { and, desc, eq, inArray, isNotNull, lt, type SQL, sql } from 'drizzle-orm';
import type { ContinuationDatabase } from './database.js';
import { type RunRow, runQueue, runs, suspensions } from './schema.js';

// Every statement of the run queue, each by name: the writes compiled once per process
// (runWrites, run with runPrepared or a pipeline), the reads built per call (runStatements),
// and the fragments they share. runs.ts runs them and turns their rows into records.
//
// A run has a row of run_queue exactly while its claimable_at is not null, at that same time.
// Every write that changes claimable_at first locks the run and reads the time it had (held),
// then updates the run and moves, adds or deletes its queue row (syncQueue), in one statement.
// So the queue row is only written by the holder of its run's lock; the claim takes that lock
// with SKIP LOCKED and waits for nothing.

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

/** The statuses a run never leaves by itself. */
export const FINISHED_RUN_STATUSES: readonly RunStatus[] = ['completed', 'cancelled', 'failed'];

/** The columns a run is read with (all but its transcript, holder key and failure time). */
export const runColumns = {
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
  claimableAt: runs.claimableAt,
  deadlineAt: runs.deadlineAt,
  createdAt: runs.createdAt,
  updatedAt: runs.updatedAt,
  finishedAt: runs.finishedAt,
};

/** A run as {@link runColumns} read it. */
export type SelectedRun = Omit<RunRow, 'transcript' | 'leaseHolder' | 'failedAt'>;

/** The first key of every holder lock (two-key advisory locks): "runs" in ASCII. */
export const HOLDER_LOCK_SPACE = 0x72756e73;

const p = sql.placeholder;

/**
 * True when nobody holds the lock of the lease holder `holder` and it is not `own` (the
 * asker's): its process is gone. A shared try-lock, held to the end of the statement's
 * transaction: it fails only against the holder's exclusive session lock, never against
 * another asker's.
 */
function holderGone(own: SQL, holder: SQL): SQL {
  return sql`(${holder} is not null and ${holder} is distinct from ${own}::integer and pg_try_advisory_xact_lock_shared(${HOLDER_LOCK_SPACE}, ${holder}))`;
}

/** What a write's `run` step returns of a whole run, for {@link runResult}. */
const runOut = sql.raw(
  'r.run_id, r.conversation_id, r.status, r.interaction_id, r.input, r.attempts, r.lost_attempts, r.last_error, r.lease_owner, r.lease_holder, r.meta, r.claimable_at, r.deadline_at, r.created_at, r.updated_at, r.finished_at',
);

/** What a write's `run` step returns at least, for {@link syncQueue}. */
const runKey = sql.raw('r.run_id, r.claimable_at, r.status, r.lease_holder');

/** The run columns of a write's result, in the shape {@link runOfRow} reads. */
const runResult = sql.raw(
  [
    'run.run_id, run.conversation_id, run.status, run.interaction_id, run.input, run.attempts',
    'run.lost_attempts, run.last_error, run.lease_owner, run.meta',
    `(extract(epoch from run.claimable_at) * 1000)::float8 as claimable_ms`,
    `(extract(epoch from run.deadline_at) * 1000)::float8 as deadline_ms`,
    `(extract(epoch from run.created_at) * 1000)::float8 as created_ms`,
    `(extract(epoch from run.updated_at) * 1000)::float8 as updated_ms`,
    `(extract(epoch from run.finished_at) * 1000)::float8 as finished_ms`,
  ].join(', '),
);

/**
 * One write of runs: `held` locks the runs `where` selects and reads the time each had
 * (`was`), `run` updates them with `set` (its columns as `r.`, the held row as `held.`) and
 * returns `returning` (at least {@link runKey}) and `was`; then `select` from `run`, each row
 * with its queue row brought along ({@link syncQueue}).
 */
function writeRuns(w: { where: SQL; set: SQL; returning?: SQL; select: SQL }): SQL {
  const returning = w.returning ?? runKey;
  return sql`with held as (select run_id as id, claimable_at as was from ${runs} where ${w.where} for update), run as (update ${runs} r set ${w.set} from held where r.run_id = held.id returning ${returning}, held.was) select ${w.select}, ${syncQueue} from run`;
}

/**
 * Brings the queue row of a run the `run` step wrote ({@link runKey}, and `was`, its time
 * before) to its new time and lease: moved, deleted or added. Not a step of the statement:
 * a write that waited for another's lock on the run reads the run as that one committed it,
 * but a step would look for its queue row in the statement's older snapshot and miss it
 * (issue 53); the function's own statements see the row as the run's last writer left it.
 */
const syncQueue = sql.raw(
  "x_continuation.sync_run_queue(run.run_id, run.was, run.claimable_at, run.status = 'running', case when run.status = 'running' then run.lease_holder end) as queue_synced",
);

/** The fence of every write a worker makes to its run: still leased to it, still running. */
const heldByOwner = sql`run_id = ${p('runId')} and lease_owner = ${p('owner')} and status = 'running'`;

const lease = sql`now() + ${p('leaseMs')} * interval '1 millisecond'`;

// A completed run has no last error: one of a retried attempt would read as its outcome.
const completedSet = sql`status = 'completed', last_error = null, transcript = ${p('transcript')}, claimable_at = null, finished_at = now(), updated_at = now()`;

const notifyReady = sql.raw(`pg_notify('${RUN_READY_CHANNEL}', run.run_id)`);

/** What an answer sets on the run that waited on it: ready now, with `input` for the resume. */
const readiedSet = (input: SQL) =>
  sql`status = 'ready', input = ${input}, claimable_at = now(), deadline_at = null, updated_at = now()`;

const insertRun = sql`insert into ${runs} (run_id, conversation_id, status, interaction_id, claimable_at, deadline_at, meta, transcript, finished_at) values (${p('runId')}, ${p('conversationId')}, ${p('status')}, ${p('interactionId')}, ${p('dueAt')}::timestamptz, ${p('deadlineAt')}::timestamptz, ${p('meta')}, ${p('transcript')}, case when ${p('finished')}::boolean then now() end)`;

/**
 * The writes, each compiled once per process on first use (a queue is made per transaction)
 * and run with `runPrepared` or a pipeline's `run`; their rows are the driver's.
 */
export const runWrites = {
  // `meta` comes as JSON text or null (a placeholder of sql`` carries no column encoder). A
  // run with a due time is queued and notified; one without needs neither step.
  create: prepareOnce(() => insertRun),
  createQueued: prepareOnce(
    () =>
      sql`with run as (${insertRun} returning run_id, claimable_at), added as (insert into ${runQueue} (run_id, claimable_at, leased) select run_id, claimable_at, false from run) select ${notifyReady} as notified from run`,
  ),

  // Written in the SQL, not bound: `status = 'waiting'` keeps one generic plan for every call.
  markReady: prepareOnce(() =>
    writeRuns({
      where: sql`interaction_id = ${p('interactionId')} and status = 'waiting'`,
      set: readiedSet(sql`${p('input')}`),
      returning: runOut,
      select: sql`${runResult}, ${notifyReady} as notified`,
    }),
  ),

  // The claim commits asynchronously (unless told otherwise): losing it in a crash only makes
  // the run claimable again, and the fenced terminal write refuses the worker that held it.
  // The queue gives the order; the run, locked (SKIP LOCKED: a claim waits for nobody), must
  // still have the queue row's time, which a claim that took it first has changed. A due run
  // (read through the index up to now) ends it; only when none is due are the live leases'
  // holders tried, in due order. Its own queue step is safe where a write's would not be
  // (syncQueue): it waits for no lock, and a run written since its snapshot no longer has the
  // queue row's time when it is locked, so it is passed over.
  claim: prepareOnce(() => {
    const skip = sql`not run_id = any(${p('skip')}::text[])`;
    const gone = holderGone(sql`${p('holder')}`, sql.raw('lease_holder'));
    // Candidates in time order, then each run locked in turn until one is taken. ORDER BY and
    // LIMIT 1 on the join itself, so that the planner plans for one row: the index walked in
    // order, whatever the churning queue's statistics (a subquery is planned for all its rows,
    // which stale statistics made a sort of every due row at each claim).
    const first = (candidates: SQL) =>
      sql`select l.id, l.was from ${runQueue} q cross join lateral (select r.run_id as id, r.claimable_at as was from ${runs} r where r.run_id = q.run_id and r.claimable_at = q.claimable_at for update skip locked) l where ${candidates} and ${skip} order by q.claimable_at limit 1`;
    return sql`with due as (${first(sql`claimable_at <= now()`)}), gone as (${first(sql`claimable_at > now() and leased and ${gone}`)}), picked as (select id, was from due union all select id, was from gone limit 1), run as (update ${runs} r set status = 'running', lease_owner = ${p('owner')}, claimable_at = ${lease}, attempts = r.attempts + 1, lost_attempts = r.lost_attempts + (r.status = 'running')::int, lease_holder = ${p('holder')}::integer, updated_at = now() from picked where r.run_id = picked.id and set_config('synchronous_commit', ${p('commit')}, true) is not null returning ${runOut}, picked.was), moved as (update ${runQueue} q set claimable_at = run.claimable_at, leased = true, lease_holder = run.lease_holder from run where q.run_id = run.run_id and q.claimable_at = run.was) select ${runResult}, ${sql.raw('(extract(epoch from run.was) * 1000)::float8')} as was_ms, (select s.record from ${suspensions} s where s.interaction_id = run.interaction_id and not s.resolved) as record, (select ceil(extract(epoch from (q.claimable_at - now())) * 1000)::float8 from ${runQueue} q where q.run_id <> run.run_id order by q.claimable_at limit 1) as next_due_ms from run`;
  }),

  renew: prepareOnce(() =>
    writeRuns({
      where: heldByOwner,
      set: sql`claimable_at = ${lease}, updated_at = now()`,
      select: sql`run_id`,
    }),
  ),

  // The attempt the claim counted is taken back: giving a run up is not a failure of it.
  release: prepareOnce(() =>
    writeRuns({
      where: heldByOwner,
      set: sql`status = 'ready', claimable_at = now(), attempts = greatest(r.attempts - 1, 0), updated_at = now()`,
      select: sql`run_id, ${sql.raw(`pg_notify('${RUN_RELEASED_CHANNEL}', run.run_id)`)} as notified`,
    }),
  ),

  complete: prepareOnce(() =>
    writeRuns({ where: heldByOwner, set: completedSet, select: sql`run_id` }),
  ),

  // The run row is locked first (held), so that a worker that lost its lease resolves
  // nothing; the run completes only if its continuation was resolved here.
  completeResolving: prepareOnce(
    () =>
      sql`with held as (select run_id as id, claimable_at as was, interaction_id from ${runs} where ${heldByOwner} for update), resolved as (update ${suspensions} s set resolved = true, resolved_at = now(), updated_at = now() where s.interaction_id = (select interaction_id from held) and s.resolved = false returning s.interaction_id), run as (update ${runs} r set ${completedSet} from held where r.run_id = held.id and exists (select 1 from resolved) returning ${runKey}, held.was) select run_id, ${syncQueue} from run`,
  ),

  /** Waiting again, on the next question, claimable at `dueAt` (a time or null). */
  finishWaiting: prepareOnce(() =>
    writeRuns({
      where: heldByOwner,
      set: sql`status = 'waiting', interaction_id = ${p('interactionId')}, input = null, attempts = 0, lost_attempts = 0, last_error = null, claimable_at = ${p('dueAt')}::timestamptz, deadline_at = ${p('deadlineAt')}::timestamptz, updated_at = now()`,
      select: sql`run_id, case when run.claimable_at is not null then ${notifyReady} end as notified`,
    }),
  ),

  /** Cancelled or failed (`status`), with `lastError`. */
  finishEnded: prepareOnce(() =>
    writeRuns({
      where: heldByOwner,
      set: sql`status = ${p('status')}, last_error = ${p('lastError')}, claimable_at = null, finished_at = now(), failed_at = case when ${p('status')}::text = 'failed' then now() end, updated_at = now()`,
      select: sql`run_id`,
    }),
  ),

  /** A failed attempt with a retry left: ready again after `retryInMs`. */
  failRetrying: prepareOnce(() =>
    writeRuns({
      where: heldByOwner,
      set: sql`status = 'ready', last_error = ${p('error')}, claimable_at = now() + ${p('retryInMs')} * interval '1 millisecond', updated_at = now()`,
      select: sql`run_id`,
    }),
  ),

  /** A failed attempt with no retry left: failed. */
  failFinal: prepareOnce(() =>
    writeRuns({
      where: heldByOwner,
      set: sql`status = 'failed', last_error = ${p('error')}, claimable_at = null, finished_at = now(), failed_at = now(), updated_at = now()`,
      select: sql`run_id`,
    }),
  ),

  /** Fails a run held by `owner` without counting its claim as an attempt. */
  giveUp: prepareOnce(() =>
    writeRuns({
      where: heldByOwner,
      set: sql`status = 'failed', attempts = r.attempts - 1, last_error = ${p('error')}, claimable_at = null, finished_at = now(), failed_at = now(), updated_at = now()`,
      select: sql`run_id`,
    }),
  ),

  /** Makes a failed run ready again, its attempts counted from zero. */
  retry: prepareOnce(() =>
    writeRuns({
      where: sql`run_id = ${p('runId')} and status = 'failed'`,
      set: sql`status = 'ready', attempts = 0, lost_attempts = 0, claimable_at = now(), finished_at = null, failed_at = null, updated_at = now()`,
      returning: runOut,
      select: sql`${runResult}, ${notifyReady} as notified`,
    }),
  ),

  /** Cancels every unfinished run of a conversation. */
  cancelConversation: prepareOnce(() =>
    writeRuns({
      where: sql`conversation_id = ${p('conversationId')} and status in ('running', 'waiting', 'ready')`,
      set: sql`status = 'cancelled', last_error = ${p('reason')}, lease_owner = null, claimable_at = null, finished_at = now(), updated_at = now()`,
      select: sql`run_id`,
    }),
  ),

  /** Makes the waiting runs of many answers ready, `entries` a JSON array of `{interaction_id, input}`. */
  markReadyMany: prepareOnce(
    () =>
      sql`with answers as (select * from jsonb_to_recordset(${p('entries')}::jsonb) as a(interaction_id text, input jsonb)), held as (select r.run_id as id, r.claimable_at as was, a.input from ${runs} r join answers a on r.interaction_id = a.interaction_id where r.status = 'waiting' for update of r), run as (update ${runs} r set ${readiedSet(sql.raw('held.input'))} from held where r.run_id = held.id returning ${runKey}, held.was) select run_id, ${notifyReady} as notified, ${syncQueue} from run`,
  ),
};

const dateOf = (ms: unknown) => (ms === null || ms === undefined ? null : new Date(Number(ms)));

/** A run from a row of a write's result ({@link runResult}). */
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
    claimableAt: dateOf(row.claimable_ms),
    deadlineAt: dateOf(row.deadline_ms),
    createdAt: dateOf(row.created_ms) ?? new Date(Number.NaN),
    updatedAt: dateOf(row.updated_ms) ?? new Date(Number.NaN),
    finishedAt: dateOf(row.finished_ms),
  };
}

/**
 * The reads, and the statements that run too seldom to be worth compiling once, each by name:
 * `(db, ...params) => query`.
 */
export const runStatements = {
  /** Takes holder lock `key` for the session if free: `granted`. */
  takeHolderLock: (db: ContinuationDatabase, key: number) =>
    db.execute(sql`select pg_try_advisory_lock(${HOLDER_LOCK_SPACE}, ${key}::integer) as granted`),

  /** `ms` until the next run is claimable by `holder`'s process (0: now), null when none is queued. */
  nextDue: (db: ContinuationDatabase, holder: number | undefined) => {
    const gone = holderGone(sql`${holder ?? null}`, sql.raw('q.lease_holder'));
    return db.execute(
      sql`select ceil(extract(epoch from (min(case when q.leased and q.claimable_at > now() and ${gone} then now() else q.claimable_at end) - now())) * 1000)::float8 as ms from ${runQueue} q`,
    );
  },

  /** The running runs' leases, soonest claimable first, each with whether its holder lives. */
  leases: (db: ContinuationDatabase, holder: number | undefined, limit: number) => {
    const own = sql`${holder ?? null}`;
    return db.execute(sql`
      select q.run_id, r.conversation_id, r.lease_owner as owner, q.claimable_at as expires_at,
        case when q.lease_holder is null then 'unknown'
          when q.lease_holder = ${own}::integer then 'self'
          when ${holderGone(own, sql.raw('q.lease_holder'))} then 'gone' else 'alive' end as holder
      from (select run_id, claimable_at, lease_holder from ${runQueue} where leased
        order by claimable_at, run_id limit ${limit}) q
      cross join lateral (select conversation_id, lease_owner from ${runs} r
        where r.run_id = q.run_id and r.claimable_at = q.claimable_at offset 0) r
      order by q.claimable_at, q.run_id`);
  },

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
    // Every failed run has a failed_at: said, so that the planner reads runs_failed_idx.
    if (filter.status === 'failed') conditions.push(isNotNull(runs.failedAt));
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

  /** Deletes the runs that finished before `cutoff` (a finished run has no queue row). */
  purgeFinishedBefore: (db: ContinuationDatabase, cutoff: Date) =>
    db.delete(runs).where(finishedBefore(cutoff)).returning({ runId: runs.runId }),

  /**
   * The runs whose queue row is not exactly one row at their claimable_at with their lease,
   * and the queue rows of no run at that time: empty when the queue and its runs agree.
   */
  queueDrift: (db: ContinuationDatabase) =>
    db.execute(
      sql`select run_id, (extract(epoch from claimable_at) * 1000)::float8 as claimable_ms, (select array_agg((extract(epoch from t) * 1000)::float8) from unnest(queued_at) t) as queued_ms from x_continuation.run_queue_drift order by run_id`,
    ),

  /** Runs counted by status, and the running ones whose lease has not expired. */
  census: (db: ContinuationDatabase) =>
    db
      .select({
        status: runs.status,
        count: sql<number>`count(*)::int`,
        leased: sql<number>`(count(*) filter (where ${runs.status} = 'running' and ${runs.claimableAt} > now()))::int`,
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
