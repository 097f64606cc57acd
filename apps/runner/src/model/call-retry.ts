import { setTimeout as sleep } from 'node:timers/promises';
import { backoffMs } from '@x/postgres-kit';
import { type Env, setting, VARIABLES } from '../config/index.js';
import { ModelError, type ModelErrorCode } from '../errors.js';

/** How a provider call is retried. Our retries are the only ones: the SDKs' are off. */
export interface RetryPolicy {
  /** Attempts after the first one (default 3, or `RUNNER_MODEL_RETRIES`). */
  retries: number;
  /** First backoff step in ms (default 500, or `RUNNER_MODEL_BACKOFF_MS`); doubles each time. */
  baseMs: number;
  /** No single wait is longer than this (ms). */
  maxDelayMs: number;
  /** A `retry-after` longer than this ends the retries at once (waiting that long is not "a moment"). */
  maxRetryAfterMs: number;
}

/** What a failed attempt means. */
export interface AttemptFailure {
  /**
   * The code of the {@link ModelError} the call fails with, if it is not tried again
   * (default `unavailable` when retryable, else `unexpected`).
   */
  code?: ModelErrorCode;
  retryable: boolean;
  /** The wait the server asked for (`retry-after`), if it did. */
  retryAfterMs?: number | undefined;
  /** One line for the person: what went wrong. */
  message: string;
}

/** A response stream ended before the provider said it was done: worth another attempt. */
export class StreamCutError extends Error {
  constructor(before: string) {
    super(`the response stream ended before ${before}`);
  }
}

/** The deepest `code` (or message) of an error's causes: `fetch failed` hides `ECONNREFUSED`. */
function rootCause(error: unknown): string | undefined {
  let reason: string | undefined;
  for (let at = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined; at; ) {
    if (typeof at.code === 'string') reason = at.code;
    else if (reason === undefined && typeof at.message === 'string') reason = at.message;
    at = at.cause as typeof at;
  }
  return reason;
}

/**
 * The failures both providers classify alike: a cut stream, and an SDK connection error
 * (a reset, a refused connection, a timeout: the network, not the request), which names
 * the `url` it tried. Undefined for anything else.
 */
export function transportFailure(
  error: unknown,
  connectionError: abstract new (...args: never[]) => Error,
  url: string,
): AttemptFailure | undefined {
  if (error instanceof StreamCutError) {
    return { code: 'unavailable', retryable: true, message: error.message };
  }
  if (error instanceof connectionError) {
    const reason = rootCause(error.cause) ?? error.message;
    return { code: 'unavailable', retryable: true, message: `cannot reach ${url} (${reason})` };
  }
  return undefined;
}

/**
 * A connection that broke off mid-response (a reset socket: the SDK passes the fetch error
 * through), naming the `url`; undefined for anything else.
 */
export function connectionLost(error: unknown, url: string): AttemptFailure | undefined {
  const reason = rootCause(error);
  if (
    error instanceof TypeError ||
    (reason && /^(ECONNRESET|EPIPE|ETIMEDOUT|UND_ERR)/.test(reason))
  ) {
    return {
      code: 'unavailable',
      retryable: true,
      message: `connection to ${url} lost (${reason ?? String(error)})`,
    };
  }
  return undefined;
}

/** The default policy, adjusted by `RUNNER_MODEL_RETRIES` and `RUNNER_MODEL_BACKOFF_MS`. */
export function retryPolicyFromEnv(env?: Env): RetryPolicy {
  return {
    retries: setting(VARIABLES.RUNNER_MODEL_RETRIES, env),
    baseMs: setting(VARIABLES.RUNNER_MODEL_BACKOFF_MS, env),
    maxDelayMs: 30_000,
    maxRetryAfterMs: 60_000,
  };
}

/** Reads `retry-after-ms` or `retry-after` (seconds or an HTTP date) in ms. */
export function retryAfterMs(
  headers: { get(name: string): string | null } | undefined,
  now: number = Date.now(),
): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const after = headers?.get('retry-after');
  if (!after) return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Whether an HTTP status is worth another try: 408, 409, 429 and 5xx (529 is Anthropic's
 * "overloaded"). `x-should-retry`, when the server sends it, decides instead.
 */
function isRetryableStatus(
  status: number,
  headers?: { get(name: string): string | null },
): boolean {
  const should = headers?.get('x-should-retry');
  if (should === 'true') return true;
  if (should === 'false') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * A provider's answer with an error status: 429 is `rate_limited`, the statuses worth another
 * try are `unavailable`, any other `refused`; retried as {@link isRetryableStatus} says.
 */
export function statusFailure(
  status: number,
  headers: { get(name: string): string | null } | undefined,
  message: string,
): AttemptFailure {
  const code =
    status === 429 ? 'rate_limited' : isRetryableStatus(status) ? 'unavailable' : 'refused';
  return {
    code,
    retryable: isRetryableStatus(status, headers),
    retryAfterMs: retryAfterMs(headers),
    message,
  };
}

/** Hooks for tests. */
interface RetryHooks {
  sleep?: (ms: number, signal?: AbortSignal) => Promise<unknown>;
  /** Called before each wait, with the attempt that failed (0 = the first). */
  onRetry?: (failure: AttemptFailure, attempt: number, waitMs: number) => void;
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, or the retries are spent.
 * A wait honours the server's `retry-after` (up to `maxRetryAfterMs`), else backs off with
 * jitter. The error thrown is always a {@link ModelError} (an abort is passed through):
 * `retryable: true` when only transient failures were seen, so the caller may try later.
 */
export async function withRetry<T>(
  provider: string,
  attempt: (n: number) => Promise<T>,
  classify: (error: unknown) => AttemptFailure,
  policy: RetryPolicy,
  options: RetryHooks & { signal?: AbortSignal | undefined } = {},
): Promise<T> {
  const wait =
    options.sleep ?? ((ms: number, signal?: AbortSignal) => sleep(ms, undefined, { signal }));
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (ModelError.is(error)) throw error;
      const failure = classify(error);
      const code = failure.code ?? (failure.retryable ? 'unavailable' : 'unexpected');
      const tries = `${n + 1} attempt${n === 0 ? '' : 's'}`;
      if (!failure.retryable) {
        throw new ModelError(code, `[${provider}] ${failure.message}`, {
          retryable: false,
          cause: error,
        });
      }
      if (failure.retryAfterMs !== undefined && failure.retryAfterMs > policy.maxRetryAfterMs) {
        throw new ModelError(
          code,
          `[${provider}] ${failure.message}; the server asks to wait ${Math.ceil(failure.retryAfterMs / 1000)}s, try again later`,
          { retryable: true, cause: error },
        );
      }
      if (n >= policy.retries) {
        throw new ModelError(code, `[${provider}] ${failure.message} (gave up after ${tries})`, {
          retryable: true,
          cause: error,
        });
      }
      const ms =
        failure.retryAfterMs ?? backoffMs(n, { baseMs: policy.baseMs, maxMs: policy.maxDelayMs });
      options.onRetry?.(failure, n, ms);
      await wait(ms, options.signal);
    }
  }
}
