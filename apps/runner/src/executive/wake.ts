import { setTimeout as sleep } from 'node:timers/promises';
import { ASKUSER_ANSWERED_CHANNEL } from '@x/askuser';
import { type LeaseRecord, RUN_RELEASED_CHANNEL } from '@x/continuation-postgres';
import { OPTION_DEFAULTS } from '../config/index.js';
import type { Storage } from '../storage/index.js';
import { backoffMs, type Resumed, type ResumeOptions, resumeNext } from './resume.js';

/** How long a stopping wake lets the turns in flight finish unless told otherwise. */
export const DEFAULT_GRACE_MS = OPTION_DEFAULTS.graceMs;

/** Options of {@link wake}. */
export interface WakeOptions extends ResumeOptions {
  /** Resume what is ready now, then return (instead of waiting for more). */
  once: boolean;
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
  pollMs?: number;
  /**
   * Opens a fresh storage after the database failed, closing the old one. A pool that lived
   * through a dropped connection can keep a broken connection checked out (postgres.js), so
   * after an outage the loop starts over on a new pool. Without it the loop keeps its storage.
   */
  reopen?: () => Promise<Storage>;
}

/**
 * The executive's wake loop: claims and resumes ready runs until told to stop (or, with
 * `once`, until none is ready). Wakes on LISTEN/NOTIFY where the storage offers it, when
 * the next retry backoff or lease runs out, and polls as the fallback. An unreachable
 * database is waited for.
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
  let stopping = false;
  let failed = 0;
  let wakeUp = () => {};
  let signal = new Promise<void>((resolve) => {
    wakeUp = resolve;
  });
  const poke = () => {
    wakeUp();
    signal = new Promise<void>((resolve) => {
      wakeUp = resolve;
    });
  };
  const graceOver = new AbortController();
  let grace: NodeJS.Timeout | undefined;
  let ended = false;
  // Ends the idle waits at a stop, so that no timer keeps the process up.
  const halt = new AbortController();
  const pause = (ms: number) => sleep(ms, undefined, { signal: halt.signal }).catch(() => {});
  void options.stop.then(() => {
    stopping = true;
    halt.abort();
    poke();
    if (!ended) grace = setTimeout(() => graceOver.abort(), options.graceMs ?? DEFAULT_GRACE_MS);
  });
  const listen = () =>
    storage
      .listen?.([ASKUSER_ANSWERED_CHANNEL, RUN_RELEASED_CHANNEL], () => poke())
      .catch(() => undefined);
  let unlisten = await listen();
  const pollMs = options.pollMs ?? (storage.listen ? 5_000 : 1_000);
  let outages = 0;
  // A --once pass tries each run at most once: a failed attempt is left for a later pass.
  const tried = new Set<string>();
  let reopening: Promise<void> | undefined;
  // One reopen at a time; workers that failed on the old storage wait for it.
  const reopen = (broken: Storage) => {
    if (!options.reopen || storage !== broken) return reopening;
    reopening ??= (async () => {
      // Not awaited, like the old storage's close: the broken connection ends in the background.
      void unlisten?.().catch(() => {});
      storage = await options.reopen!();
      unlisten = await listen();
    })()
      .catch(() => {}) // the next attempt reports the outage again
      .finally(() => {
        reopening = undefined;
      });
    return reopening;
  };

  let idle = 0;
  const worker = async (index: number) => {
    while (!stopping) {
      // Taken before looking, so that an answer announced while this worker is busy wakes it.
      const woken = signal;
      const using = storage;
      let resumed: Resumed | undefined;
      try {
        resumed = await resumeNext(using, {
          ...options,
          worker: `w${index}`,
          graceOver: graceOver.signal,
          ...(options.once ? { skip: [...tried] } : {}),
        });
        outages = 0;
      } catch (error) {
        const wait = backoffMs(outages++);
        options.onUnavailable(error, wait);
        if (options.once) throw error;
        await pause(wait);
        await reopen(using);
        continue;
      }
      if (resumed) {
        tried.add(resumed.runId);
        const { status } = resumed.outcome;
        if (status === 'retrying' || status === 'failed' || status === 'lease-lost') failed++;
        options.onResumed(resumed);
        continue;
      }
      if (options.once) return;
      idle++;
      await Promise.race([woken, pause(await untilNextDue(using, pollMs))]);
      idle--;
    }
  };

  const watching = options.once
    ? undefined
    : watchLeases(() => storage, {
        pollMs,
        stop: options.stop,
        pause,
        onGone: poke,
        allIdle: () => idle === Math.max(1, options.concurrency),
        onLeased: (leases) => options.onLeased?.(leases),
      });
  try {
    await Promise.all(
      Array.from({ length: Math.max(1, options.concurrency) }, (_, i) => worker(i + 1)),
    );
  } finally {
    ended = true;
    clearTimeout(grace);
    await watching;
    await unlisten?.();
  }
  return { failed, storage };
}

// A retry's backoff or an expired lease sends no notification: sleep until the next one is due.
async function untilNextDue(storage: Storage, pollMs: number): Promise<number> {
  const due = await storage
    .leaseHolder()
    .then((holder) => storage.runs().nextDueInMs(holder))
    .catch(() => undefined);
  return due === undefined ? pollMs : Math.min(pollMs, due + 10);
}

/** How often the leases of live workers elsewhere are looked at: a dead one's run is taken within this. */
const TAKEOVER_CHECK_MS = 300;

/**
 * A worker process that dies sends no notification: while other processes hold leases
 * whose holders can be seen, look every {@link TAKEOVER_CHECK_MS} whether one of them is
 * gone (`onGone` wakes the workers to claim its runs); else at the poll interval. Also
 * tells `onLeased` of the other workers' leases when they changed and this process's
 * workers are all idle.
 */
async function watchLeases(
  storage: () => Storage,
  options: {
    pollMs: number;
    stop: Promise<void>;
    /** Sleeps, or less when the loop stops (so that no timer keeps the process up). */
    pause: (ms: number) => Promise<void>;
    onGone: () => void;
    allIdle: () => boolean;
    onLeased: (leases: LeaseRecord[]) => void;
  },
): Promise<void> {
  let stopped = false;
  void options.stop.then(() => {
    stopped = true;
  });
  let said = '';
  while (!stopped) {
    const using = storage();
    const leases = await using
      .leaseHolder()
      .then((holder) => using.runs().leases(holder === undefined ? {} : { holder }))
      .catch(() => undefined);
    const others = (leases ?? []).filter((lease) => lease.holder !== 'self');
    if (others.some((lease) => lease.holder === 'gone')) options.onGone();
    const seen = JSON.stringify(others.map((l) => [l.runId, l.owner, l.holder]));
    if (leases && seen !== said && options.allIdle()) {
      said = seen;
      options.onLeased(others);
    }
    const soon = others.some((lease) => lease.holder === 'alive');
    await options.pause(soon ? TAKEOVER_CHECK_MS : options.pollMs);
  }
}
