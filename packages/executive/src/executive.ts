import { type AnsweredPause, type ResumeAnswer, resumeAnswerSchema } from '@x/askuser';
import {
  type ClaimedRun,
  type PostgresRunQueue,
  type RetryPolicy,
  type RunJob,
  RunWorker,
  type RunWorkerConnection,
  type RunWorkerEvent,
} from '@x/continuation-postgres';
import { ExecutiveError, withoutOrigin } from './errors.js';
import type { ExecutiveEvents } from './events.js';
import type { FlowContext } from './flow.js';
import type { LeasePolicy } from './lease-policy.js';
import { applyDue, recordFailure } from './resume-writes.js';
import { type RunKind, runKindOf } from './run-kind.js';
import type { ExecutiveDatabase, ExecutiveStorage } from './storage.js';
import { isDelegation } from './stored-delegation.js';
import type { RunResult } from './suspend.js';
import { traceWait, type Watching } from './watching.js';

/** Options of {@link createExecutive}. */
export interface ExecutiveOptions<S extends ExecutiveStorage = ExecutiveStorage> {
  storage: S;
  /**
   * The kinds of run it resumes, by name: a run's kind is `meta.kind`, recorded when it
   * started, else `"turn"` (register {@link turnKind} under it). A run of a kind not here fails.
   */
  kinds: Readonly<Record<string, RunKind<S>>>;
  /** The events of a storage's flows (e.g. {@link outboxEvents} with your routing); default none. */
  events?: (storage: S) => ExecutiveEvents<ExecutiveDatabase>;
  /** How long a claim holds a run, and how failed attempts are retried; the worker's defaults otherwise. */
  lease?: LeasePolicy;
  /** False for an error that must not be retried, beyond those marked `retryable: false`. */
  retryable?: (error: unknown) => boolean;
  /** A failed attempt's reason as the run records it; default its message. */
  describeError?: (error: unknown) => string;
  /** Who watches it (the expired questions' waits are traced); read at each resume. */
  watching?: Watching;
}

/** Options of {@link Executive.work}. */
export interface WorkOptions<S extends ExecutiveStorage = ExecutiveStorage> {
  /** Runs resumed side by side (each worker resumes one run at a time); default 1. */
  concurrency?: number;
  /**
   * Aborting it stops the work: nothing more is claimed, the resumes in flight get `graceMs`
   * to finish, then they are cut and their leases released.
   */
  signal?: AbortSignal;
  /** How long resumes in flight may take once stopped; default 30 s. */
  graceMs?: number;
  /** How often to look for ready runs when no notification arrives. */
  pollMs?: number;
  /** Resume what is claimable now (at most `max` runs), then return, instead of waiting for more. */
  once?: boolean | { max?: number };
  /** Hears of each claimed run once what it resumes from is known, before its kind runs. */
  onClaimed?(claim: Claim): void;
  /** Hears how each attempt ended, of idle workers and of an unreachable database. */
  onEvent?(event: RunWorkerEvent<RunResult>): void;
  /**
   * Opens a fresh storage after the database failed (a pool can keep a broken connection
   * after an outage); without it the work keeps its storage.
   */
  reopen?: () => Promise<S>;
}

/** The unattended executive of {@link createExecutive}. */
export interface Executive<S extends ExecutiveStorage = ExecutiveStorage> {
  /**
   * Claims and resumes ready runs, each by its kind, exactly once per answer set under its
   * lease, until `signal` aborts (or, with `once`, until none is claimable). Runs claimed at a
   * question's due time get the deadline sweep first (reminder, escalation, deadline). Wakes
   * on the run queue's notifications where the storage listens, and polls as the fallback;
   * an unreachable database is waited for.
   * @returns the storage in use at the end (a new one if `reopen` opened it).
   */
  work(options?: WorkOptions<S>): Promise<{ storage: S }>;
}

/** Which run a claim is and what it resumes from, as {@link WorkOptions.onClaimed} hears it. */
export interface Claim {
  runId: string;
  /** The question whose answer the run resumes from. */
  token: string;
  conversationId: string;
  /** The answer it resumes from; undefined when it was claimed at its wait's due time. */
  answer: ResumeAnswer | undefined;
  /** Claimed because its question's deadline passed unanswered: that deadline. */
  deadline?: Date;
  /** This attempt's number (1 for the first). */
  attempt: number;
  /** The run waited on its delegate call: `token` is the parent's continuation. */
  delegated?: boolean;
}

/** What a run claimed at its due time resumed from (its deadline's default or an answer in time). */
const resolvedAtDue = new WeakMap<ClaimedRun, AnsweredPause>();

/**
 * Which run a claimed job is (its question, the answer it resumes from once known: one
 * claimed at its deadline may find an answer that came in time, the attempt), for reports.
 */
export function claimOf(job: ClaimedRun): Claim {
  const { run, suspension } = job;
  const delegated = suspension !== undefined && isDelegation(suspension);
  const resolved = resolvedAtDue.get(job);
  const expired = resolved
    ? resolved.expiredAt !== null
    : run.input === null && run.deadlineAt !== null && run.deadlineAt.getTime() <= Date.now();
  const answer =
    run.input !== null
      ? resumeAnswerSchema.parse(run.input)
      : resolved && !expired
        ? resolved.answer
        : undefined;
  return {
    runId: run.runId,
    token: run.interactionId ?? '',
    conversationId: run.conversationId,
    answer,
    attempt: run.attempts,
    ...(delegated ? { delegated } : {}),
    ...(expired && run.deadlineAt ? { deadline: run.deadlineAt } : {}),
  };
}

/**
 * The unattended executive over `storage`: its worker resumes answered runs of the registered
 * kinds, with `@x/continuation-postgres`'s `RunWorker` (claim, lease, retry, graceful stop).
 *
 * @example
 * const executive = createExecutive({ storage, kinds: { turn: turnKind({ modelFor, system, tools: {} }) } });
 * const stop = new AbortController();
 * process.once('SIGTERM', () => stop.abort());
 * await executive.work({ concurrency: 4, signal: stop.signal });
 */
export function createExecutive<S extends ExecutiveStorage>(
  options: ExecutiveOptions<S>,
): Executive<S> {
  const flowOf = (storage: S): FlowContext => ({
    storage,
    events: options.events?.(storage) ?? noEvents,
  });
  return {
    async work(work = {}) {
      let storage = options.storage;
      // A run is written through the storage it was claimed from, also after a reopen.
      const storageOf = new WeakMap<PostgresRunQueue, S>();
      const connect = (using: S): RunWorkerConnection => {
        const queue = using.runs();
        storageOf.set(queue, using);
        const { listen } = using;
        return {
          queue,
          holder: () => using.leaseHolder(),
          ...(listen
            ? { listen: (channels, onNotify) => listen.call(using, channels, onNotify) }
            : {}),
        };
      };
      const jobStorage = (job: RunJob) => storageOf.get(job.queue) ?? storage;
      const { lease, retryable } = options;
      const retry: RetryPolicy = { ...lease?.retry, ...(retryable ? { retryable } : {}) };
      const { reopen, signal } = work;
      const worker = new RunWorker<RunResult>({
        ...connect(storage),
        resume: (job) => {
          const using = jobStorage(job);
          return resumeClaimed(using, flowOf(using), job, options, work);
        },
        concurrency: Math.max(1, work.concurrency ?? 1),
        ...(work.pollMs === undefined ? {} : { pollMs: work.pollMs }),
        ...(lease ? { leaseMs: lease.leaseMs } : {}),
        retry,
        ...(options.describeError ? { describeError: options.describeError } : {}),
        // A failed run's event is written in the transaction that records the failure.
        recordFailure: (job, failure, record) =>
          recordFailure(flowOf(jobStorage(job)), job, failure.reason, record),
        ...(work.graceMs === undefined ? {} : { graceMs: work.graceMs }),
        ...(work.onEvent ? { onEvent: work.onEvent } : {}),
        ...(reopen
          ? {
              reconnect: async () => {
                storage = await reopen();
                return connect(storage);
              },
            }
          : {}),
      });
      const stop = () => void worker.stop();
      if (signal?.aborted) return { storage };
      signal?.addEventListener('abort', stop, { once: true });
      try {
        if (work.once) {
          const max = typeof work.once === 'object' ? work.once.max : undefined;
          await worker.drain(max);
        } else {
          await worker.run();
        }
      } finally {
        signal?.removeEventListener('abort', stop);
      }
      return { storage };
    },
  };
}

const noEvents: ExecutiveEvents<ExecutiveDatabase> = {
  wants: () => false,
  record: async () => {},
};

/**
 * The resume of ONE claimed run: the deadline sweep when it was claimed at its due time,
 * then its kind's resume, once, from its stored state and its answer. A run its kind cannot
 * resume, or of a kind not registered, fails without a retry.
 */
async function resumeClaimed<S extends ExecutiveStorage>(
  storage: S,
  flow: FlowContext,
  job: RunJob,
  options: ExecutiveOptions<S>,
  work: WorkOptions<S>,
): Promise<RunResult> {
  const { run, suspension, unreadable } = job;
  const { runId, conversationId } = run;
  const name = runKindOf(run.meta);
  const kind = Object.hasOwn(options.kinds, name) ? options.kinds[name] : undefined;
  // A kind that waits on several questions applies what is due of them itself.
  if (kind?.due && run.input === null && !unreadable && suspension) {
    work.onClaimed?.(claimOf(job));
    return kind.due({ flow, storage, job, suspension });
  }
  // Claimed at its due time: the question's reminder, escalation or deadline is applied
  // (each once); it waits again, or resumes from the outcome.
  const due = run.input === null && !unreadable ? await applyDue(flow, job) : undefined;
  if (due?.status === 'reminded') return due;
  const resolved = due?.resolved;
  if (resolved) {
    resolvedAtDue.set(job, resolved);
    // An expiry is the wait's end, traced once, by the first attempt.
    if (resolved.expiredAt && run.attempts <= 1) traceWait(options.watching ?? {}, resolved);
  }
  work.onClaimed?.(claimOf(job));
  const answer: ResumeAnswer = resolved?.answer ?? resumeAnswerSchema.parse(run.input);
  const expiredAt = resolved?.expiredAt ? run.deadlineAt : null;
  if (!kind) {
    const known = Object.keys(options.kinds).join(', ') || 'none';
    const why = `run ${runId} is of kind "${name}", which this worker does not resume (it resumes: ${known}); it is not resumed`;
    // It would fail the same way on every attempt.
    throw Object.assign(new ExecutiveError('usage', why, { runId }), { retryable: false });
  }
  const refusal = unreadable ? unreadableReason(unreadable) : kind.refuse?.(job);
  // A cancel resumes nothing: it only needs a readable continuation to mark resolved.
  if (refusal !== undefined && (unreadable || answer.action !== 'cancel')) {
    throw Object.assign(new Error(refusal), { retryable: false });
  }
  if (!suspension) {
    await job.finish({
      status: 'cancelled',
      reason: 'its saved turn was resolved by another route',
    });
    return { status: 'cancelled', runId, conversationId };
  }
  return kind.resume({ flow, storage, job, suspension, answer, expiredAt, resolved });
}

/** Why a claimed run's saved state cannot be read: written by a newer version, or damaged. */
function unreadableReason(unreadable: NonNullable<ClaimedRun['unreadable']>): string {
  return unreadable.code === 'unsupported_version'
    ? writtenByNewer(unreadable)
    : `its saved turn cannot be read (${withoutOrigin(unreadable.message)}); it is not resumed`;
}

/**
 * The reason a run fails with when its saved turn or state has a version newer than this
 * code reads (`error`, the store's `unsupported_version`): however often it is tried.
 */
export function writtenByNewer(error: Error): string {
  return `its saved turn was written by a newer version of the runner (${withoutOrigin(error.message)}); it is not resumed`;
}
