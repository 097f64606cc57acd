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
 * @returns how many resumes failed and were left retryable (for `once` mode's exit code).
 */
export async function wake(storage: Storage, options: WakeOptions): Promise<{ failed: number }> {
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
  const unlisten = await storage.listenAnswered?.(() => poke()).catch(() => undefined);
  const pollMs = options.pollMs ?? (storage.listenAnswered ? 5_000 : 1_000);
  let outages = 0;

  const worker = async () => {
    while (!stopping) {
      const now = Date.now();
      const skip = new Set([...retries].filter(([, r]) => r.until > now).map(([token]) => token));
      let resumed: Resumed | undefined;
      try {
        resumed = await resumeNext(storage, options.modelFor, options.observerFor, skip);
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
        continue;
      }
      if (resumed) {
        retries.delete(resumed.token);
        options.onResumed(resumed);
        continue;
      }
      if (options.once) return;
      await Promise.race([signal, sleep(pollMs)]);
    }
  };

  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  } finally {
    await unlisten?.();
  }
  return { failed };
}
