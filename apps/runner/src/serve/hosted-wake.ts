import type { EventHub } from '@x/approval-center';
import type { Claim, LeasePolicy, QuestionPolicy } from '@x/executive';
import { type ModelFor, type Resumed, wake } from '../executive/index.js';
import { deliveryFromEnv } from '../notify/deliver.js';
import type { Storage } from '../storage/index.js';

/** Options of {@link startHostedWake}. */
interface HostedWakeOptions {
  /** The feed to poke when a run was resumed. */
  hub: EventHub;
  /** How long turns in flight may take to finish once stopped. */
  graceMs: number;
  /** The model for a resumed run (from its saved model id). */
  modelFor: ModelFor;
  /** How long a claim holds a run, and how failed attempts are retried. */
  lease: LeasePolicy;
  /** The policy the questions of resumed turns are asked under. */
  questionPolicy: QuestionPolicy;
  /** A run was claimed, before its turn runs. */
  onClaimed?: ((claimed: Claim) => void) | undefined;
  /** A run was resumed. */
  onResumed?: ((resumed: Resumed) => void) | undefined;
  /** The database is unavailable, or the loop stopped on an error. */
  onError: (message: string) => void;
}

/** The wake loop running inside the approval center. */
export interface HostedWake {
  /** This server recorded an answer: wakes the loop where no notification would. */
  answered(): void;
  /** Stops claiming; resolves when the turns in flight finished or were cut. */
  stop(): Promise<void>;
}

/** Starts the wake loop in this process, resuming answered runs until stopped. */
export function startHostedWake(storage: Storage, options: HostedWakeOptions): HostedWake {
  const localAnswered = new Set<() => void>();
  // Embedded: no other process can answer, so this server's own writes wake the loop.
  const wakeStorage: Storage =
    storage.listen !== undefined
      ? storage
      : {
          ...storage,
          async listen(_channels, onNotify) {
            localAnswered.add(onNotify);
            return async () => {
              localAnswered.delete(onNotify);
            };
          },
        };
  let stopWake: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stopWake = resolve;
  });
  const { hub, onError } = options;
  const loop = wake(wakeStorage, {
    once: false,
    // Several runs resume side by side: no transaction is held while a model runs.
    concurrency: 4,
    pollMs: storage.kind === 'postgres' ? 5_000 : 1_000,
    policy: options.lease,
    questionPolicy: options.questionPolicy,
    modelFor: options.modelFor,
    observerFor: () => ({ event: () => {} }),
    ...(options.onClaimed ? { onClaimed: options.onClaimed } : {}),
    onResumed: (resumed) => {
      hub.poke();
      options.onResumed?.(resumed);
    },
    onUnavailable: (error, wait) =>
      onError(
        `database unavailable (${(error as Error)?.message ?? error}); retrying in ${Math.round(wait / 1000)}s`,
      ),
    stop: stopped,
    graceMs: options.graceMs,
    delivery: deliveryFromEnv(),
  }).then(
    () => {},
    (error) => onError(`wake loop stopped: ${(error as Error)?.message ?? error}`),
  );
  return {
    answered() {
      for (const listener of localAnswered) listener();
    },
    stop() {
      stopWake();
      return loop;
    },
  };
}
