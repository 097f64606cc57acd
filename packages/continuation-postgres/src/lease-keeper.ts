import type { PostgresRunQueue } from './runs.js';

/** A lease kept while a resume runs. */
export interface KeptLease {
  /** Aborted when the lease was taken over or the grace ran out. */
  readonly signal: AbortSignal;
  /** A renewal found the lease taken over. */
  readonly lost: boolean;
  /** The stopping worker's grace ran out. */
  readonly cut: boolean;
  /** Stops renewing, after the renewal in flight. */
  stop(): Promise<void>;
}

/**
 * Renews the lease every `renewMs` while the resume runs; aborts it the moment a renewal
 * finds the lease taken over (`lost`), or when `graceOver` is aborted (`cut`). A renewal that
 * fails (the database is away) is told to `onRenewFailed` and tried again at the next tick.
 */
export function keepLease(
  queue: PostgresRunQueue,
  runId: string,
  owner: string,
  leaseMs: number,
  renewMs: number,
  graceOver: AbortSignal,
  onRenewFailed: (error: unknown) => void,
): KeptLease {
  const controller = new AbortController();
  let cut = false;
  let lost = false;
  const onGraceOver = () => {
    cut = true;
    controller.abort(new Error(`run ${runId} was cut: the stopping worker's grace ran out`));
  };
  if (graceOver.aborted) onGraceOver();
  else graceOver.addEventListener('abort', onGraceOver, { once: true });
  let renewing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    renewing = queue
      .renew(runId, owner, leaseMs)
      .then((held) => {
        if (held || controller.signal.aborted) return;
        lost = true;
        controller.abort(new Error(`the lease of run ${runId} was taken over`));
      })
      .catch(onRenewFailed);
  }, renewMs);
  return {
    signal: controller.signal,
    get lost() {
      return lost;
    },
    get cut() {
      return cut;
    },
    async stop() {
      clearInterval(timer);
      graceOver.removeEventListener('abort', onGraceOver);
      await renewing;
    },
  };
}
