import { setTimeout as sleep } from 'node:timers/promises';
import type { TurnObserver } from './agent.js';
import { type ModelFor, type Resumed, ResumeFailedError, resumeNext } from './executive.js';
import type { Storage } from './storage.js';

/** Options of {@link wake}. */
export interface WakeOptions {
  /** Resume what is answered now, then return (instead of waiting for more). */
  once: boolean;
  /** Workers resuming in parallel (each in its own transaction). */
  concurrency: number;
  modelFor: ModelFor;
  observerFor: (token: string, conversationId: string) => TurnObserver;
  onResumed: (resumed: Resumed) => void;
  /** A resume failed; it will be retried after `retryInMs` (not in `once` mode). */
  onRetry: (token: string, error: unknown, retryInMs: number) => void;
  /** The database could not be reached; the loop waits `retryInMs` and tries again. */
  onUnavailable: (error: unknown, retryInMs: number) => void;
  /** Resolves to stop the loop after the resumes in flight. */
  stop: Promise<void>;
  /** How often to look for answers when no notification arrives. */
  pollMs?: number;
  /**
   * Opens a fresh storage after the database failed, closing the old one. A pool that lived
   * through a dropped connection can keep a broken connection checked out (postgres.js), so
   * after an outage the loop starts over on a new pool. Without it the loop keeps its storage.
   */
  reopen?: () => Promise<Storage>;
}

const MAX_BACKOFF_MS = 30_000;

/** Exponential backoff with full jitter, capped. */
export function backoffMs(attempt: number, baseMs = 500): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.min(attempt, 16));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/**
 * The executive's wake loop: resumes answered pauses until told to stop (or, with `once`,
 * until none is left). Wakes on LISTEN/NOTIFY where the storage offers it, and polls as the
 * fallback. A failed resume is retried with backoff; an unreachable database is waited for.
 *
 * @returns how many resumes failed and were left retryable (for `once` mode's exit code),
 *   and the storage in use at the end (a new one if it was reopened): the caller closes it.
 */
export async function wake(
  initial: Storage,
  options: WakeOptions,
): Promise<{ failed: number; storage: Storage }> {
  let storage = initial;
  const retries = new Map<string, { attempts: number; until: number }>();
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
  void options.stop.then(() => {
    stopping = true;
    poke();
  });
  const listen = () => storage.listenAnswered?.(() => poke()).catch(() => undefined);
  let unlisten = await listen();
  const pollMs = options.pollMs ?? (storage.listenAnswered ? 5_000 : 1_000);
  let outages = 0;
  let reopening: Promise<void> | undefined;
  // One reopen at a time; workers that failed on the old storage wait for it.
  const reopen = (broken: Storage) => {
    if (!options.reopen || storage !== broken) return reopening;
    reopening ??= (async () => {
      await unlisten?.().catch(() => {});
      storage = await options.reopen!();
      unlisten = await listen();
    })()
      .catch(() => {}) // the next attempt reports the outage again
      .finally(() => {
        reopening = undefined;
      });
    return reopening;
  };

  const worker = async () => {
    while (!stopping) {
      // Taken before looking, so that an answer announced while this worker is busy wakes it.
      const woken = signal;
      const now = Date.now();
      const skip = new Set([...retries].filter(([, r]) => r.until > now).map(([token]) => token));
      let resumed: Resumed | undefined;
      const using = storage;
      try {
        resumed = await resumeNext(using, options.modelFor, options.observerFor, skip);
        outages = 0;
      } catch (error) {
        if (error instanceof ResumeFailedError) {
          const attempts = (retries.get(error.token)?.attempts ?? 0) + 1;
          const wait = backoffMs(attempts);
          retries.set(error.token, { attempts, until: Date.now() + wait });
          failed++;
          options.onRetry(error.token, error.cause, wait);
          continue;
        }
        const wait = backoffMs(outages++, 1_000);
        options.onUnavailable(error, wait);
        if (options.once) throw error;
        await Promise.race([sleep(wait), options.stop]);
        await reopen(using);
        continue;
      }
      if (resumed) {
        retries.delete(resumed.token);
        options.onResumed(resumed);
        continue;
      }
      if (options.once) return;
      await Promise.race([woken, sleep(pollMs)]);
    }
  };

  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  } finally {
    await unlisten?.();
  }
  return { failed, storage };
}
