import {
  alreadyResolved,
  ContinuationError,
  decodeSuspension,
  notFound,
  type Suspension,
  type SuspensionRecord,
} from '@x/continuation';
import { jsonParameter, type Pipeline, retryRead, rowsOf, runPrepared } from '@x/postgres-kit';
import type { Message } from '@x/wire';
import type { ContinuationDatabase } from './database.js';
import { wrapDatabaseError } from './errors.js';
import {
  FINISHED_RUN_STATUSES,
  RUN_READY_CHANNEL,
  RUN_RELEASED_CHANNEL,
  type RunStatus,
  runOfRow,
  runStatements,
  runWrites,
  type SelectedRun,
} from './run-statements.js';

export { FINISHED_RUN_STATUSES, RUN_READY_CHANNEL, RUN_RELEASED_CHANNEL, type RunStatus };

/** A run as {@link PostgresRunQueue} reports it. */
export interface RunRecord {
  runId: string;
  conversationId: string;
  status: RunStatus;
  /** The continuation the run waits on, resumes, or last resumed. */
  interactionId: string | null;
  /** What the resume needs beside the continuation (the person's answer), once ready. */
  input: unknown;
  /** Claims of the current wait so far (a retry or a lost lease adds one). */
  attempts: number;
  /**
   * Of the attempts before the current one, those that ended with their worker gone (it
   * died, or stalled past its lease, and the run was taken over); the others ended with an
   * error.
   */
  lostAttempts: number;
  /** Why the last attempt failed, if it did. */
  lastError: string | null;
  /** The worker holding the run (`running`), or the last one that did. */
  leaseOwner: string | null;
  /** `running`: when the lease expires unless renewed. */
  leaseExpiresAt: Date | null;
  /** `ready`: when it may be claimed (later than now while a retry backs off). */
  readyAt: Date | null;
  /**
   * The deadline of the question the run waits on (`waiting`: a worker claims it then), or
   * of the wait it was claimed at (`running`, and after: no answer readied it); `null` when
   * the wait has none or an answer readied the run.
   */
  deadlineAt: Date | null;
  /** The caller's own data, given at {@link PostgresRunQueue.create} (e.g. the model id). */
  meta: unknown;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

/** What {@link PostgresRunQueue.census} counts. */
export interface RunCensus {
  /** Runs in each status (0 for a status no run is in). */
  byStatus: Record<RunStatus, number>;
  /** Running runs whose lease has not expired: the leases workers hold now. */
  leased: number;
}

/** A new run, as {@link PostgresRunQueue.create} takes it. */
export interface NewRun {
  runId: string;
  conversationId: string;
  /** `waiting` on `interactionId`, or `completed` at once (a turn that asked nothing). */
  status: 'waiting' | 'completed';
  interactionId?: string;
  /** For `waiting`: the deadline of the question, when the run is claimed unless answered. */
  deadlineAt?: Date;
  /**
   * For `waiting`: when a worker claims it without an answer, if earlier than `deadlineAt`
   * (e.g. a reminder of the question); default `deadlineAt`.
   */
  dueAt?: Date;
  meta?: unknown;
  /** For `completed`: the whole transcript. */
  messages?: readonly Message[];
}

/** A run taken by {@link PostgresRunQueue.claim}, with what its resume needs. */
export interface ClaimedRun {
  /**
   * Now `running`, leased to the claiming worker, `attempts` counted. With `input` null it
   * was claimed while waiting, at its due time, and no answer readied it: when `deadlineAt`
   * passed, apply the deadline (e.g. `AskUserStore.expire`) and resume with its outcome;
   * before it (a due time of its own, e.g. `AskUserStore.applyDue`), apply what is due and
   * let it wait again (`finish` with `status: 'waiting'` and the next `dueAt`).
   */
  run: RunRecord;
  /**
   * The continuation to resume, or undefined when it is gone, was resolved by another route,
   * or cannot be read (then {@link ClaimedRun.unreadable} says why).
   */
  suspension: Suspension | undefined;
  /**
   * Why the stored continuation cannot be read: `unsupported_version` (written by newer code)
   * or `invalid`. The run is claimed all the same, so that the caller fails it with this reason.
   */
  unreadable?: ContinuationError;
  /**
   * When the run became claimable, as the claim found it: when it was made ready (an
   * answer's {@link PostgresRunQueue.markReady}, a retry's backoff ended), its due time, or
   * its lease's expiry (taken over). Lets a caller time an answer to its resume without
   * another read.
   */
  claimableAt?: Date;
  /**
   * How long after the claim the next other run becomes claimable by its due time (a ready
   * run, a retry's backoff, a wait's due time, a lease's expiry), in milliseconds by the
   * server's clock: 0 when one is claimable already, undefined when none has a due time. A
   * worker that also hears {@link RUN_READY_CHANNEL} and {@link RUN_RELEASED_CHANNEL}
   * sleeps this long after the run instead of claiming again; a lease whose holder is gone
   * counts at its expiry here.
   */
  nextDueInMs?: number;
}

/** How a claimed run ends, as {@link PostgresRunQueue.finish} records it. */
export type RunEnd =
  /** The turn completed: `messages` are those the resume added after the continuation's. */
  | { status: 'completed'; messages: readonly Message[] }
  /**
   * The turn asked again: the run now waits on that new continuation (until `deadlineAt`,
   * when given: then a worker claims it without an answer).
   */
  | { status: 'waiting'; interactionId: string; deadlineAt?: Date; dueAt?: Date }
  | { status: 'cancelled'; reason: string }
  | { status: 'failed'; error: string };

/** A run whose queue row disagrees with it, as {@link PostgresRunQueue.queueDrift} finds it. */
export interface QueueDrift {
  runId: string;
  /** The run's claimable time, or null when no run has this queue row's id (or none is due). */
  claimableAt: Date | null;
  /** The times of its queue rows (none when it has no row). */
  queuedAt: Date[];
}

/** Options of {@link PostgresRunQueue.claim}. */
export interface ClaimOptions {
  /** Names the claiming worker; unique per claim, it is the fencing token of the lease. */
  owner: string;
  /** How long the lease lasts unless renewed. */
  leaseMs: number;
  /** Runs not to take (e.g. those this worker already tried in one pass). */
  skip?: readonly string[];
  /**
   * The claiming process's holder key, the same in each of its claims: from
   * {@link takeHolderLock} on PostgreSQL, any number on a database of one session (PGlite).
   * A lease stays live while its holder's lock is held by another session (or is the
   * claimer's own); a lease whose holder's lock is free is claimable at once. Without it
   * the lease counts until it expires.
   */
  holder?: number;
}

/** A running run's lease, as {@link PostgresRunQueue.leases} reports it. */
export interface LeaseRecord {
  runId: string;
  conversationId: string;
  /** The claim's owner (the fencing token). */
  owner: string;
  /** When it becomes claimable unless renewed, or at once when its holder is `gone`. */
  expiresAt: Date;
  /**
   * `self`: the asking process holds it; `alive`: its holder's lock is held (its process
   * lives); `gone`: nobody holds that lock (the process ended: claimable now); `unknown`:
   * claimed without a holder (e.g. through a transaction-mode pooler), the expiry decides.
   */
  holder: 'self' | 'alive' | 'gone' | 'unknown';
}

/** Options of the {@link PostgresRunQueue} constructor. */
export interface PostgresRunQueueOptions {
  /**
   * Commit each claim durably. Default false: a claim commits asynchronously, and one lost
   * in a crash only leaves its run ready again, unless the database has no WAL writer to
   * flush it soon after (PGlite): there every claim would be lost with its process, and an
   * attempt that kills its worker would never be counted.
   */
  synchronousClaim?: boolean;
}

/** Options of {@link PostgresRunQueue.list}. */
export interface ListRunsOptions {
  conversationId?: string;
  status?: RunStatus;
  /** At most this many, newest first; default 50. */
  limit?: number;
}

const DEFAULT_LIST_LIMIT = 50;

function toRecord(row: SelectedRun & { notified?: unknown }): RunRecord {
  // `notified`: the value of a statement's pg_notify, nothing of the run.
  const { claimableAt, notified, ...rest } = row;
  return {
    ...rest,
    leaseExpiresAt: row.status === 'running' ? claimableAt : null,
    readyAt: row.status === 'ready' ? claimableAt : null,
  };
}

/**
 * Takes a lease-holder lock for the calling process on `session`: a connection of its own
 * that stays open while the process lives (not a pool's, not through a transaction-mode
 * pooler). Pass the key it returns as {@link ClaimOptions.holder} in every claim. When the
 * process dies the server ends its session and frees the lock, and the runs it leased are
 * claimable at once instead of when their leases expire.
 *
 * @param key the key to take again (after the session was replaced); another one is chosen
 *   when someone else holds it.
 * @returns the holder key, a positive 31-bit integer.
 * @throws {ContinuationError} `unavailable` when the database fails.
 * @example
 * const session = drizzle({ client: postgres(url, { max: 1 }) });
 * const holder = await takeHolderLock(session);
 * await queue.claim({ owner, leaseMs: 60_000, holder });
 */
export async function takeHolderLock(session: ContinuationDatabase, key?: number): Promise<number> {
  for (let tries = 0, wanted = key; tries < 20; tries++, wanted = undefined) {
    const candidate = wanted ?? randomHolderKey();
    const [row] = rowsOf(
      await runStatements.takeHolderLock(session, candidate).catch((error: unknown) => {
        throw wrapDatabaseError(error, 'take the lease-holder lock');
      }),
    );
    if (row?.granted === true) return candidate;
  }
  throw new ContinuationError('unavailable', 'no free lease-holder lock after 20 tries');
}

/** A random positive 31-bit integer, a holder key. */
export function randomHolderKey(): number {
  return 1 + Math.floor(Math.random() * 0x7ffffffe);
}

/**
 * The durable queue of unattended runs, in `x_continuation.runs` beside the continuations
 * it resumes, with their claim order in `x_continuation.run_queue` (create them with
 * `migrate(db)`). A run waits on a continuation, becomes ready when the person answers, is
 * claimed by one worker at a time under a lease, and ends completed, cancelled or failed (or
 * waits again, on the next question).
 *
 * - {@link claim} is one statement that takes one claimable run through the queue's index,
 *   sets the lease and returns the continuation record: no transaction stays open while
 *   the worker runs the model.
 * - Each write is one statement that writes the run and its queue row together; an answer,
 *   a claim and a run's end update the run without a new index entry (HOT).
 * - Every write of a claimed run names its lease owner, and is refused (`lease_lost`) once
 *   another worker took the run over: the worker that lost its lease commits nothing.
 * - A worker that stops before its turn ends gives the run back with {@link release}: any
 *   worker may claim it at once, without waiting for the lease to expire.
 * - Pass a transaction handle to write a run with rows of other packages, e.g. making a run
 *   ready in the same transaction as the answer that readies it.
 *
 * @example
 * const queue = new PostgresRunQueue(db);
 * const claimed = await queue.claim({ owner: `worker-${randomUUID()}`, leaseMs: 60_000 });
 * if (claimed) {
 *   // ... run the model, renewing the lease ...
 *   await db.transaction(async (tx) => {
 *     await new PostgresRunQueue(tx).finish(claimed.run.runId, owner, { status: 'completed', messages });
 *     await new PostgresContinuationStore(tx).markResolved(claimed.run.interactionId!);
 *   });
 * }
 */
export class PostgresRunQueue {
  readonly #db: ContinuationDatabase;
  readonly #claimCommit: 'on' | 'off';

  constructor(db: ContinuationDatabase, options: PostgresRunQueueOptions = {}) {
    this.#db = db;
    this.#claimCommit = options.synchronousClaim ? 'on' : 'off';
  }

  /** Records a new run, waiting on its first question or already completed. */
  async create(run: NewRun): Promise<void> {
    const completed = run.status === 'completed';
    const dueAt = completed ? null : ((run.dueAt ?? run.deadlineAt)?.toISOString() ?? null);
    await this.#run(`create run "${run.runId}"`, () =>
      runPrepared(this.#db, dueAt === null ? runWrites.create : runWrites.createQueued, {
        runId: run.runId,
        conversationId: run.conversationId,
        status: run.status,
        interactionId: run.interactionId ?? null,
        deadlineAt: !completed && run.deadlineAt ? run.deadlineAt.toISOString() : null,
        dueAt,
        meta: jsonParameter(run.meta),
        transcript: completed ? JSON.stringify(run.messages ?? []) : null,
        finished: completed,
      }),
    );
  }

  /**
   * The answer to `interactionId` arrived: its waiting run becomes ready to claim now, with
   * `input` for the resume. Returns the run, or undefined when no run waits on it (an
   * interactive chat's question, or a run already stopped).
   */
  async markReady(interactionId: string, input: unknown): Promise<RunRecord | undefined> {
    const [row] = await this.#run(`mark the run of "${interactionId}" ready`, () =>
      runPrepared(this.#db, runWrites.markReady, { interactionId, input: jsonParameter(input) }),
    );
    return row && toRecord(runOfRow(row));
  }

  /**
   * {@link markReady} as a statement of the caller's pipelined transaction (`@x/postgres-kit`'s
   * `pipelinedTransaction`): sent at once, so that, not awaited, it goes out with the caller's
   * next statements and the COMMIT (which it still must succeed for). Resolves to whether a
   * run became ready.
   * @example
   * await pipelinedTransaction(db, async (tx) => {
   *   if (await answered(tx)) void queue.markReadyIn(tx, interactionId, input);
   * });
   */
  markReadyIn(pipeline: Pipeline, interactionId: string, input: unknown): Promise<boolean> {
    const readied = pipeline
      .run(runWrites.markReady, { interactionId, input: jsonParameter(input) })
      .then(
        (rows) => rows.length > 0,
        (error: unknown) => {
          throw wrapDatabaseError(error, `mark the run of "${interactionId}" ready`);
        },
      );
    // Not awaited, its failure fails the transaction: no rejection is left unhandled.
    readied.catch(() => {});
    return readied;
  }

  /**
   * {@link markReady} for many answers in one statement. Returns how many runs became
   * ready.
   */
  async markReadyMany(
    answers: ReadonlyArray<{ interactionId: string; input: unknown }>,
  ): Promise<number> {
    if (answers.length === 0) return 0;
    const entries = JSON.stringify(
      answers.map((a) => ({ interaction_id: a.interactionId, input: a.input })),
    );
    const readied = await this.#run('mark runs ready', () =>
      runPrepared(this.#db, runWrites.markReadyMany, { entries }),
    );
    return readied.length;
  }

  /**
   * Takes one claimable run (ready and due, or running with an expired lease or a holder
   * that is gone, see {@link ClaimOptions.holder}), oldest due first, in one statement: it
   * is leased to `owner` for `leaseMs` and its attempts go up by one (and its lost attempts,
   * when it was taken from a worker). Concurrent claims never take the same run. A
   * continuation that cannot be read (a newer version's record) does not throw: it comes
   * back as `unreadable`.
   */
  async claim(options: ClaimOptions): Promise<ClaimedRun | undefined> {
    const [row] = await this.#run('claim a run', () =>
      runPrepared(this.#db, runWrites.claim, {
        owner: options.owner,
        leaseMs: options.leaseMs,
        skip: [...(options.skip ?? [])],
        holder: options.holder ?? null,
        commit: this.#claimCommit,
      }),
    );
    if (!row) return undefined;
    const run = runOfRow(row);
    const record = (row.record as string | null | undefined) ?? null;
    const nextDueMs = row.next_due_ms as number | string | null | undefined;
    const claimed = {
      run: toRecord(run),
      // The time the run had as the claim found it: when it became claimable.
      ...(row.was_ms == null ? {} : { claimableAt: new Date(Number(row.was_ms)) }),
      ...(nextDueMs == null ? {} : { nextDueInMs: Math.max(0, Number(nextDueMs)) }),
    };
    if (record === null) return { ...claimed, suspension: undefined };
    try {
      return { ...claimed, suspension: decodeRecord(run.interactionId ?? '', record) };
    } catch (error) {
      // Thrown, it would leave the run leased to come back at every lease expiry.
      if (ContinuationError.is(error)) {
        return { ...claimed, suspension: undefined, unreadable: error };
      }
      throw error;
    }
  }

  /**
   * How long until the next run becomes claimable (a retry's backoff or a lease running
   * out), in milliseconds by the server's clock: 0 when one is claimable now (a lease whose
   * holder is gone included; `holder` is the asking process's, as in {@link claim}),
   * undefined when none is ready or running. A wake loop sleeps this long instead of
   * polling blindly.
   */
  async nextDueInMs(holder?: number): Promise<number | undefined> {
    const [row] = rowsOf(
      await this.#read('find the next due run', () => runStatements.nextDue(this.#db, holder)),
    );
    return row?.ms == null ? undefined : Math.max(0, Number(row.ms));
  }

  /**
   * The running runs' leases, soonest claimable first (at most `limit`, default 100), each
   * with whether its holder lives, as seen by the process whose holder key is `holder`: what
   * a worker that found nothing to claim can tell about the work others hold.
   */
  async leases(options: { holder?: number; limit?: number } = {}): Promise<LeaseRecord[]> {
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : 100;
    const rows = rowsOf(
      await this.#read('list the leases', () =>
        runStatements.leases(this.#db, options.holder, limit),
      ),
    );
    return rows.map((row) => ({
      runId: String(row.run_id),
      conversationId: String(row.conversation_id),
      owner: String(row.owner),
      expiresAt: new Date(row.expires_at as string | Date),
      holder: row.holder as LeaseRecord['holder'],
    }));
  }

  /** Extends the lease of a run `owner` holds; false once the lease was taken over. */
  async renew(runId: string, owner: string, leaseMs: number): Promise<boolean> {
    const rows = await this.#run(`renew the lease of run "${runId}"`, () =>
      runPrepared(this.#db, runWrites.renew, { runId, owner, leaseMs }),
    );
    return rows.length === 1;
  }

  /**
   * Gives a claimed run back unfinished (its worker is stopping): it is ready and claimable
   * by any worker at once, and the claim that took it no longer counts as an attempt. Only
   * while `owner` holds the lease, which ends with it: every later write of `owner` is
   * refused, so nothing of the released attempt commits after this. Notifies
   * {@link RUN_RELEASED_CHANNEL} when it commits.
   * @returns false when `owner` no longer held the run (taken over, stopped, finished): nothing changed.
   */
  async release(runId: string, owner: string): Promise<boolean> {
    const rows = await this.#run(`release the lease of run "${runId}"`, () =>
      runPrepared(this.#db, runWrites.release, { runId, owner }),
    );
    return rows.length === 1;
  }

  /**
   * Records how a claimed run ended, only while `owner` still holds it. Run it first in the
   * transaction that also writes the continuations, so that all of it commits or none.
   * @throws {ContinuationError} `lease_lost` when another worker took the run over.
   */
  async finish(runId: string, owner: string, end: RunEnd): Promise<void> {
    const rows = await this.#run(`finish run "${runId}"`, () => {
      if (end.status === 'completed') {
        const transcript = JSON.stringify(end.messages);
        return runPrepared(this.#db, runWrites.complete, { runId, owner, transcript });
      }
      if (end.status === 'waiting') {
        return runPrepared(this.#db, runWrites.finishWaiting, {
          runId,
          owner,
          interactionId: end.interactionId,
          dueAt: (end.dueAt ?? end.deadlineAt)?.toISOString() ?? null,
          deadlineAt: end.deadlineAt?.toISOString() ?? null,
        });
      }
      const lastError = end.status === 'failed' ? end.error : end.reason;
      return runPrepared(this.#db, runWrites.finishEnded, {
        runId,
        owner,
        status: end.status,
        lastError,
      });
    });
    if (rows.length === 0) throw leaseLost(runId, owner);
  }

  /**
   * Records that a claimed run completed and resolves the continuation it resumed, in one
   * statement (one round trip, no transaction to hold): both are written or neither, only
   * while `owner` still holds the run. `messages` are those the resume added after the
   * continuation's.
   * @throws {ContinuationError} `lease_lost` when another worker took the run over,
   *   `already_resolved` when its continuation was resolved by another route (or `not_found`
   *   when it is gone): nothing was written.
   */
  async complete(runId: string, owner: string, messages: readonly Message[]): Promise<void> {
    const rows = await this.#run(`complete run "${runId}"`, () =>
      runPrepared(this.#db, runWrites.completeResolving, {
        runId,
        owner,
        transcript: JSON.stringify(messages),
      }),
    );
    if (rows.length === 1) return;
    const run = await this.get(runId);
    if (run?.status !== 'running' || run.leaseOwner !== owner) throw leaseLost(runId, owner);
    const interactionId = run.interactionId ?? '';
    const [left] = await this.#read(`read the continuation of run "${runId}"`, () =>
      runStatements.suspensionResolved(this.#db, interactionId),
    );
    throw left ? alreadyResolved(interactionId) : notFound(interactionId);
  }

  /**
   * An attempt failed with `error`: the run is ready again after `retryInMs`, or `failed`
   * when `retryInMs` is undefined (no retry left). Only while `owner` holds it.
   * @throws {ContinuationError} `lease_lost` when another worker took the run over.
   */
  async fail(
    runId: string,
    owner: string,
    error: string,
    retryInMs: number | undefined,
  ): Promise<'ready' | 'failed'> {
    const status = retryInMs === undefined ? 'failed' : 'ready';
    const rows = await this.#run(`record a failed attempt of run "${runId}"`, () =>
      retryInMs === undefined
        ? runPrepared(this.#db, runWrites.failFinal, { runId, owner, error })
        : runPrepared(this.#db, runWrites.failRetrying, { runId, owner, error, retryInMs }),
    );
    if (rows.length === 0) throw leaseLost(runId, owner);
    return status;
  }

  /**
   * Fails a claimed run without counting this claim as an attempt: the attempts before it
   * used up the limit (each ended with its worker gone, or with an error). Only while
   * `owner` holds it.
   * @throws {ContinuationError} `lease_lost` when another worker took the run over.
   */
  async giveUp(runId: string, owner: string, error: string): Promise<void> {
    const rows = await this.#run(`give up run "${runId}"`, () =>
      runPrepared(this.#db, runWrites.giveUp, { runId, owner, error }),
    );
    if (rows.length === 0) throw leaseLost(runId, owner);
  }

  /**
   * Makes a failed run ready again, with its attempts counted from zero.
   * @throws {ContinuationError} `not_found` for an unknown run, `invalid` for one not failed.
   */
  async retry(runId: string): Promise<RunRecord> {
    const [row] = await this.#run(`retry run "${runId}"`, () =>
      runPrepared(this.#db, runWrites.retry, { runId }),
    );
    if (row) return toRecord(runOfRow(row));
    const current = await this.get(runId);
    if (!current) throw new ContinuationError('not_found', `no run "${runId}"`);
    throw new ContinuationError(
      'invalid',
      `run "${runId}" is ${current.status}: only a failed run can be retried`,
      { field: 'status' },
    );
  }

  /**
   * Cancels every run of the conversation that has not finished (the conversation was
   * stopped); a worker running one then fails its terminal write. Returns how many.
   */
  async cancelConversation(conversationId: string, reason = 'stopped'): Promise<number> {
    const rows = await this.#run(`cancel the runs of "${conversationId}"`, () =>
      runPrepared(this.#db, runWrites.cancelConversation, { conversationId, reason }),
    );
    return rows.length;
  }

  /** The run, or undefined. */
  async get(runId: string): Promise<RunRecord | undefined> {
    const [row] = await this.#read(`read run "${runId}"`, () => runStatements.get(this.#db, runId));
    return row && toRecord(row);
  }

  /** These runs (those that exist), by run id. */
  async getMany(runIds: readonly string[]): Promise<Map<string, RunRecord>> {
    if (runIds.length === 0) return new Map();
    const rows = await this.#read('read runs', () => runStatements.getMany(this.#db, runIds));
    return new Map(rows.map((row) => [row.runId, toRecord(row)]));
  }

  /** Runs newest first, optionally of one conversation and/or in one status. */
  async list(options: ListRunsOptions = {}): Promise<RunRecord[]> {
    const limit =
      options.limit !== undefined && options.limit > 0 ? options.limit : DEFAULT_LIST_LIMIT;
    const rows = await this.#read('list runs', () => runStatements.list(this.#db, options, limit));
    return rows.map(toRecord);
  }

  /**
   * The transcript of a completed run: the messages of the continuation it last resumed
   * followed by those the resume added (or the whole transcript of a run that never
   * waited). Undefined while the run has not completed.
   */
  async transcript(runId: string): Promise<Message[] | undefined> {
    const [row] = await this.#read(`read the transcript of run "${runId}"`, () =>
      runStatements.transcript(this.#db, runId),
    );
    if (!row || row.transcript === null) return undefined;
    const added = JSON.parse(row.transcript) as Message[];
    if (row.record === null) return added;
    return [...(decodeRecord(row.interactionId ?? '', row.record).messages ?? []), ...added];
  }

  /**
   * Deletes finished runs that finished before `cutoff`. Returns how many; with
   * `options.dryRun` only counts them.
   */
  async purgeFinishedBefore(cutoff: Date, options: { dryRun?: boolean } = {}): Promise<number> {
    if (options.dryRun) {
      const [row] = await this.#read('count finished runs', () =>
        runStatements.countFinishedBefore(this.#db, cutoff),
      );
      return Number(row?.count ?? 0);
    }
    const rows = await this.#run('purge finished runs', () =>
      runStatements.purgeFinishedBefore(this.#db, cutoff),
    );
    return rows.length;
  }

  /**
   * How many runs stand in each status, and how many leases are held (running, not yet
   * expired): one grouped read, cheap enough for a metrics scrape.
   */
  async census(): Promise<RunCensus> {
    const rows = await this.#read('count runs', () => runStatements.census(this.#db));
    const byStatus: Record<RunStatus, number> = {
      running: 0,
      waiting: 0,
      ready: 0,
      completed: 0,
      cancelled: 0,
      failed: 0,
    };
    let leased = 0;
    for (const row of rows) {
      byStatus[row.status as RunStatus] = Number(row.count);
      leased += Number(row.leased);
    }
    return { byStatus, leased };
  }

  /**
   * Where the queue's claim order disagrees with its runs: each run whose claimable_at has
   * no queue row at that time (or more than one, or one with another lease), and each queue
   * row of no run at its time. Empty unless something wrote the tables outside this queue's
   * statements; a drifted run is never claimed, so check this after a fault.
   */
  async queueDrift(): Promise<QueueDrift[]> {
    const rows = rowsOf(
      await this.#read('compare the run queue with its runs', () =>
        runStatements.queueDrift(this.#db),
      ),
    );
    return rows.map((row) => ({
      runId: String(row.run_id),
      claimableAt: row.claimable_ms == null ? null : new Date(Number(row.claimable_ms)),
      queuedAt: ((row.queued_ms as unknown[] | null) ?? []).map((ms) => new Date(Number(ms))),
    }));
  }

  /** The conversations that have a run in one of `statuses`, each once, in no set order. */
  async conversationsWith(statuses: readonly RunStatus[]): Promise<string[]> {
    if (statuses.length === 0) return [];
    const rows = await this.#read('list the conversations of runs', () =>
      runStatements.conversationsWith(this.#db, statuses),
    );
    return rows.map((row) => row.conversationId);
  }

  async #run<T>(doing: string, query: () => PromiseLike<T>): Promise<T> {
    try {
      return await query();
    } catch (error) {
      throw wrapDatabaseError(error, doing);
    }
  }

  // A read is tried once more over a connection the server dropped (stock postgres.js
  // reports the old connection's error on the first statement after it); writes never are.
  #read<T>(doing: string, query: () => PromiseLike<T>): Promise<T> {
    return this.#run(doing, () => retryRead(query));
  }
}

function leaseLost(runId: string, owner: string): ContinuationError {
  return new ContinuationError(
    'lease_lost',
    `run "${runId}" is no longer held by ${owner}: its lease expired and another worker took it over, or it was stopped; nothing was written`,
  );
}

function decodeRecord(interactionId: string, record: string): Suspension {
  let json: SuspensionRecord;
  try {
    json = JSON.parse(record) as SuspensionRecord;
  } catch (error) {
    throw new ContinuationError(
      'invalid',
      `record of interaction "${interactionId}" is not valid JSON: ${(error as Error).message}`,
      { interactionId, field: '(record)', cause: error },
    );
  }
  return decodeSuspension(json, { owned: true });
}
