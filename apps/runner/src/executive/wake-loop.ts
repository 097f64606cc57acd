import { DEFAULT_GRACE_MS, type LeaseRecord, type RunWorkerEvent } from '@x/continuation-postgres';
import { claimOf, createExecutive, type RunResult } from '@x/executive';
import { Deliverer, type DeliveryEvent, type DeliveryOptions } from '../notify/deliver.js';
import { outboxEvents } from '../notify/events.js';
import type { Storage } from '../storage/index.js';
import { AuditSealer } from './audit-seal.js';
import {
  attemptError,
  type Resumed,
  type ResumeOptions,
  retryable,
  runnerKinds,
} from './resume.js';
import { watching } from './telemetry.js';

export { DEFAULT_GRACE_MS };

/** Options of {@link wake}. */
export interface WakeOptions extends ResumeOptions {
  /** Resume what is ready now, then return (instead of waiting for more). */
  once: boolean;
  /** With `once`: resume at most this many runs. */
  max?: number;
  /** Workers resuming in parallel (each claims and resumes one run at a time). */
  concurrency: number;
  /** A claimed run ended this attempt (however it ended). */
  onResumed: (resumed: Resumed) => void;
  /**
   * Every worker is idle and the leases of other workers changed: how many runs they hold,
   * and when each becomes claimable (not in `once` mode).
   */
  onLeased?: (leases: LeaseRecord[]) => void;
  /** The database could not be reached; the loop waits `retryInMs` and tries again. */
  onUnavailable: (error: unknown, retryInMs: number) => void;
  /**
   * Resolves to stop the loop: nothing more is claimed, and the turns in flight get
   * `graceMs` to finish before they are cut and their leases released.
   */
  stop: Promise<void>;
  /** How long turns in flight may take to finish once `stop` resolved; default 30 s. */
  graceMs?: number;
  /** How often to look for ready runs when no notification arrives. */
  pollMs?: number | undefined;
  /**
   * Opens a fresh storage after the database failed, closing the old one. A pool that lived
   * through a dropped connection can keep a broken connection checked out (postgres.js), so
   * after an outage the loop starts over on a new pool. Without it the loop keeps its storage.
   */
  reopen?: (() => Promise<Storage>) | undefined;
  /** How often, at most, the audit log's chains are sealed into its global chain; default 10 s. */
  sealEveryMs?: number;
  /** Delivers the notification outbox too (`deliveryFromEnv()`): none without a sender. */
  delivery?: DeliveryOptions | undefined;
}

/**
 * The executive's wake loop, `createExecutive(...).work()` of `@x/executive` over the runner's
 * storage and run kinds, with the audit sealer, the deliverer and the reports: claims and
 * resumes ready runs until told to stop (or, with `once`, until none is ready). Wakes on
 * LISTEN/NOTIFY (the run queue's own: a run readied, released or given a due time) where
 * the storage offers it, when the next retry
 * backoff or lease runs out, and polls as the fallback. An unreachable database is waited for.
 *
 * @returns how many attempts did not end the run well (retrying, failed, lease lost: for
 *   `once` mode's exit code), and the storage in use at the end (a new one if it was
 *   reopened): the caller closes it.
 */
export async function wake(
  initial: Storage,
  options: WakeOptions,
): Promise<{ failed: number; storage: Storage }> {
  let storage = initial;
  let failed = 0;
  const { reopen } = options;
  // Resumes answer and cancel questions: their conversations' chains go into the global one.
  const sealer = new AuditSealer(() => storage, options.sealEveryMs);
  const { delivery } = options;
  const deliverer =
    delivery && Object.keys(delivery.senders).length > 0
      ? new Deliverer(() => storage, { ...delivery, onDelivery: countedDelivery(delivery) })
      : undefined;
  const executive = createExecutive<Storage>({
    storage,
    kinds: runnerKinds(options),
    // A failed run's notification is written in the transaction that records the failure.
    events: (using) => outboxEvents(using),
    lease: options.policy,
    retryable,
    describeError: attemptError,
    watching,
  });
  const stop = new AbortController();
  void options.stop.then(() => stop.abort());
  const work = executive.work({
    concurrency: Math.max(1, options.concurrency),
    signal: stop.signal,
    graceMs: options.graceMs ?? DEFAULT_GRACE_MS,
    ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
    ...(options.once
      ? { once: { ...(options.max === undefined ? {} : { max: options.max }) } }
      : {}),
    ...(options.onClaimed ? { onClaimed: options.onClaimed } : {}),
    onEvent: (event) => {
      if (event.type === 'idle') return options.onLeased?.(event.leases);
      if (event.type === 'error') return options.onUnavailable(event.error, event.retryInMs);
      // Announced by the resume, once it knows what the run resumes from.
      if (event.type === 'run-claimed') return;
      sealer.poke();
      countEnding(event);
      deliverer?.poke();
      const resumed = resumedOf(event);
      const { status } = resumed.outcome;
      if (status === 'retrying' || status === 'failed' || status === 'lease-lost') failed++;
      options.onResumed(resumed);
    },
    ...(reopen
      ? {
          reopen: async () => {
            storage = await reopen();
            return storage;
          },
        }
      : {}),
  });
  if (options.once) {
    await work;
    await deliverer?.deliverDue();
  } else {
    const pollMs = options.pollMs ?? 1_000;
    const onError = (error: unknown) => options.onUnavailable(error, pollMs);
    await Promise.all([work, deliverer?.run(options.stop, pollMs, onError)]);
  }
  await sealer.flush();
  return { failed, storage };
}

/**
 * Claims ONE ready run and resumes it, as {@link wake} would, then returns how it ended.
 * @returns undefined when no run is ready.
 * @throws the database's error when it cannot be reached.
 */
export async function resumeNext(
  storage: Storage,
  options: ResumeOptions,
): Promise<Resumed | undefined> {
  let resumed: Resumed | undefined;
  await wake(storage, {
    ...options,
    once: true,
    max: 1,
    concurrency: 1,
    onResumed: (done) => {
      resumed = done;
    },
    onUnavailable: () => {},
    stop: new Promise(() => {}),
  });
  return resumed;
}

/** The caller's report of each delivery attempt, counted first by the process's watcher. */
function countedDelivery(delivery: DeliveryOptions): (event: DeliveryEvent) => void {
  return (event) => {
    if (event.type === 'notification-delivered') {
      watching.telemetry?.notification(event.channel, 'delivered');
    } else if (event.type === 'notification-failed') {
      watching.telemetry?.notification(event.channel, 'failed');
    }
    delivery.onDelivery?.(event);
  };
}

/** Tells the process's watcher how an attempt ended: a run's end, a retry, a lost lease. */
function countEnding(
  event: Exclude<RunWorkerEvent<RunResult>, { type: 'idle' | 'error' | 'run-claimed' }>,
): void {
  const { telemetry } = watching;
  if (!telemetry) return;
  const seconds = (Date.now() - event.job.run.createdAt.getTime()) / 1000;
  if (event.type === 'run-resumed') {
    const { status } = event.result;
    // Taken at a reminder or escalation: it waits again, nothing ended.
    if (status === 'reminded') return;
    // An expiry is counted once, by the attempt that resumed from it.
    if (claimOf(event.job).deadline) telemetry.runExpired();
    if (status !== 'waiting') telemetry.runEnded(status, seconds);
  } else if (event.type === 'run-failed') telemetry.runEnded('failed', seconds);
  else if (event.type === 'retry-scheduled') telemetry.retryScheduled();
  else if (event.type === 'lease-lost') telemetry.leaseLost();
}

/** How one attempt ended, as the runner reports it. */
function resumedOf(
  event: Exclude<RunWorkerEvent<RunResult>, { type: 'idle' | 'error' | 'run-claimed' }>,
): Resumed {
  const claim = claimOf(event.job);
  const ids = { runId: claim.runId, conversationId: claim.conversationId };
  switch (event.type) {
    case 'run-resumed':
      return { ...claim, outcome: event.result };
    case 'retry-scheduled':
      return {
        ...claim,
        outcome: { status: 'retrying', ...ids, error: event.reason, retryInMs: event.retryInMs },
      };
    case 'run-failed':
      return {
        ...claim,
        // A give-up is no attempt: the attempt is the last one before this claim.
        attempt: event.gaveUp ? claim.attempt - 1 : claim.attempt,
        outcome: {
          status: 'failed',
          ...ids,
          error: event.reason,
          attempts: event.attempts,
          ...(event.gaveUp ? { gaveUp: true } : {}),
        },
      };
    case 'lease-lost':
      return { ...claim, outcome: { status: 'lease-lost', ...ids } };
    case 'run-released':
      return { ...claim, outcome: { status: 'released', ...ids } };
  }
}
