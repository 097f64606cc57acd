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

const DEFAULT_BASE_MS = 1_000;
const DEFAULT_MAX_MS = 300_000;

/**
 * The wait after the failed attempt number `failed` (0 for the first): exponential, capped at
 * `maxMs`, with jitter over its upper half so that workers that failed together do not all
 * come back at the same moment.
 */
export function backoffMs(
  failed: number,
  { baseMs = DEFAULT_BASE_MS, maxMs = DEFAULT_MAX_MS }: Pick<RetryPolicy, 'baseMs' | 'maxMs'> = {},
): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(failed, 0), 20));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

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
