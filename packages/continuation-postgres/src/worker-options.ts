import type { Message } from '@x/wire';
import type { RunQueueListen } from './listen.js';
import type { AttemptCounts, RetryPolicy } from './retry-policy.js';
import type { ClaimedRun, LeaseRecord, PostgresRunQueue, RunEnd } from './runs.js';

/** What a {@link RunWorker} claims through and is woken by; {@link RunWorkerOptions.reconnect} makes a new one. */
export interface RunWorkerConnection {
  queue: PostgresRunQueue;
  /**
   * Wakes the worker when a run is released or made ready (see {@link listenPostgresJs},
   * {@link listenPglite}); without it the worker polls.
   */
  listen?: RunQueueListen;
  /**
   * The process's holder key for its claims ({@link ClaimOptions.holder}), so that its runs
   * are claimable at once when it dies; undefined while it cannot be had. Without it a dead
   * worker's runs wait for their leases to expire.
   */
  holder?: () => Promise<number | undefined>;
}

/** One claimed run, as the app's {@link RunWorkerOptions.resume} gets it. */
export interface RunJob extends ClaimedRun {
  /** The claim's lease owner, the fencing token every write of this run must name. */
  readonly owner: string;
  /** This attempt's number (1 for the first). */
  readonly attempt: number;
  /** The lease's length, for a renewal the app makes itself (e.g. inside its transaction). */
  readonly leaseMs: number;
  /**
   * Aborted when the lease was taken over (a renewal found it gone) or the stopping worker's
   * grace ran out: stop the turn, write nothing more.
   */
  readonly signal: AbortSignal;
  /** The queue the run was claimed from. */
  readonly queue: PostgresRunQueue;
  /** {@link PostgresRunQueue.finish} of this run under this lease. */
  finish(end: RunEnd): Promise<void>;
  /** {@link PostgresRunQueue.complete} of this run under this lease (resolves its continuation too). */
  complete(messages: readonly Message[]): Promise<void>;
}

/**
 * What a {@link RunWorker} reports, each once per occasion:
 * - `run-claimed`: a run was claimed, before its resume starts;
 * - `run-resumed`: the resume returned (`result` is what it returned): the run ended as it recorded;
 * - `retry-scheduled`: the attempt failed; the run is ready again after `retryInMs`;
 * - `run-failed`: the attempt failed and no retry is left (or the error is not retryable), or
 *   (`gaveUp`) the attempts before this claim used up the limit;
 * - `lease-lost`: another worker took the run over (this one stalled past its lease, or the
 *   run was cancelled): nothing more of this attempt was written;
 * - `run-released`: the worker stopped and its grace ran out mid-resume: the lease was given
 *   back, so another worker takes the run at once;
 * - `idle`: every slot is idle and the leases other workers hold changed (`leases`);
 * - `error`: the database failed outside a run's attempt, or renewing the lease of a running
 *   resume (said at most once per renewal interval); the worker tries again in `retryInMs`.
 */
export type RunWorkerEvent<T> =
  | { type: 'run-claimed'; job: RunJob }
  | { type: 'run-resumed'; job: RunJob; result: T }
  | { type: 'retry-scheduled'; job: RunJob; error: unknown; reason: string; retryInMs: number }
  | {
      type: 'run-failed';
      job: RunJob;
      error: unknown;
      reason: string;
      attempts: AttemptCounts;
      gaveUp: boolean;
    }
  | { type: 'lease-lost'; job: RunJob }
  | { type: 'run-released'; job: RunJob }
  | { type: 'idle'; leases: LeaseRecord[] }
  | { type: 'error'; error: unknown; retryInMs: number };

/** Options of {@link RunWorker}. */
export interface RunWorkerOptions<T> extends RunWorkerConnection {
  /**
   * The app's one function: resume this claimed run and record how it ended, fenced by
   * `job.owner` (`job.complete`, `job.finish`, or the queue's writes inside the app's own
   * transaction). A throw is a failed attempt, retried by {@link retry}; a `lease_lost`
   * error from a fenced write is a lost lease.
   */
  resume(job: RunJob): Promise<T>;
  /** Runs resumed side by side (one claim per free slot); default 1. */
  concurrency?: number;
  /** How long to wait for a wake-up before looking again; default 5 s with `listen`, 1 s without. */
  pollMs?: number;
  /** How long a lease lasts unless renewed; default 60 s. */
  leaseMs?: number;
  /** How often a running resume's lease is renewed; default a third of {@link leaseMs}. */
  renewEveryMs?: number;
  /** How failed attempts are retried. */
  retry?: RetryPolicy;
  /** A failed attempt's reason, as the run records it; default the error's message. */
  describeError?(error: unknown): string;
  /**
   * Channels besides {@link RUN_RELEASED_CHANNEL} and {@link RUN_READY_CHANNEL} (which the
   * queue's own writes notify) that announce a run made claimable by other means.
   */
  channels?: readonly string[];
  /** How long a stopping worker lets resumes in flight finish before cutting them; default 30 s. */
  graceMs?: number;
  /** Names this worker in its lease owners (`name/w1#3.ab12cd34`); default `host/pid`. */
  name?: string;
  /**
   * Records a run's failure (no retry left, or given up) when the app has more to write with
   * it: call `record` with a queue over the app's own transaction and add the app's statements
   * beside it (e.g. a notification), so that both commit or neither. Without it the worker's
   * queue records the failure alone. A `lease_lost` from `record` is a lost lease.
   * @example
   * recordFailure: (job, failure, record) =>
   *   db.transaction(async (tx) => {
   *     await record(new PostgresRunQueue(tx));
   *     await tx.execute(sql`insert into outbox ... ${failure.reason}`);
   *   }),
   */
  recordFailure?(
    job: RunJob,
    failure: { reason: string },
    record: (queue: PostgresRunQueue) => Promise<void>,
  ): Promise<void>;
  /** Hears every {@link RunWorkerEvent}; it should not throw. */
  onEvent?(event: RunWorkerEvent<T>): void;
  /**
   * A fresh connection after the database failed (a pool that lived through a dropped
   * connection can keep a broken one); the worker stops listening on the old one. Without
   * it the worker keeps its connection.
   */
  reconnect?(): Promise<RunWorkerConnection>;
}
