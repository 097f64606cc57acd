/**
 * How a {@link RunWorker}'s failed attempts are retried: how many attempts a run gets, the
 * backoff between them, and which errors are never retried.
 *
 * @example
 * const retry: RetryPolicy = { maxAttempts: 3, baseMs: 2_000, retryable: (e) => !(e instanceof TypeError) };
 */
export interface RetryPolicy {
  /** Attempts a run gets before it fails; default 5. A claim taken from a dead worker counts. */
  maxAttempts?: number;
  /** The backoff after the first failed attempt (it doubles after each); default 1 s. */
  baseMs?: number;
  /** The longest backoff; default 5 minutes. */
  maxMs?: number;
  /**
   * False for an error that must not be retried (it would fail again on every attempt): the
   * run fails at once. Default: every error is retried except one marked with
   * `retryable: false` (see {@link isRetryable}).
   */
  retryable?(error: unknown): boolean;
  /**
   * How the limit is named in the reason of a run given up (e.g. the environment variable
   * that sets it): `the limit (NAME=5)`; default `the limit of 5`.
   */
  limitName?: string;
}

/** The default of {@link RetryPolicy.maxAttempts}. */
export const DEFAULT_MAX_ATTEMPTS = 5;

/** The backoff of a failed attempt: {@link backoffMs} of `@x/postgres-kit`, one for every loop. */
export { backoffMs } from '@x/postgres-kit';

/**
 * The marker of an error that must not be retried: `retryable: false` on the error, as on
 * the AI SDK's and our model errors. Throw `Object.assign(new Error(why), { retryable: false })`
 * from a resume to fail its run at once.
 */
export function isRetryable(error: unknown): boolean {
  return !(
    typeof error === 'object' &&
    error !== null &&
    (error as { retryable?: unknown }).retryable === false
  );
}

/** How a run's attempts ended: with the worker gone (killed, or stalled past its lease), or with an error. */
export interface AttemptCounts {
  workerGone: number;
  errors: number;
}

/** `2 ended with the worker gone, 1 with an error`. */
export function describeAttempts({ workerGone, errors }: AttemptCounts): string {
  return `${workerGone} ended with the worker gone, ${errors} with an error`;
}
