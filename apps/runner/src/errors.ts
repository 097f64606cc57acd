/** What kind of failure an error is: the one thing exit codes and HTTP statuses follow. */
export type Failure =
  | 'usage'
  | 'not_found'
  | 'conflict'
  | 'unavailable'
  | 'forbidden'
  | 'expired'
  | 'failed';

const marker = Symbol.for('runner.RunnerError');
const modelMarker = Symbol.for('runner.ModelError');

/**
 * The runner's own errors: bad usage, something named that does not exist, a busy resource,
 * an operator not allowed to do what they asked.
 */
export class RunnerError extends Error {
  readonly [marker] = true;
  override readonly name = 'RunnerError';

  constructor(
    readonly code: Exclude<Failure, 'failed'>,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }

  /** True for a `RunnerError`, also one from another copy of this module. */
  static is(error: unknown): error is RunnerError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}

/** A bad command line, option value or setting (exit 2). */
export function usageError(message: string): RunnerError {
  return new RunnerError('usage', message);
}

/** A named conversation, run, session or question that does not exist (exit 3). */
export function notFoundError(message: string): RunnerError {
  return new RunnerError('not_found', message);
}

/** An operator asked for what their roles do not allow (exit 6, HTTP 403). */
export function forbiddenError(message: string): RunnerError {
  return new RunnerError('forbidden', message);
}

/** What went wrong in a model call, as a stable string to branch on. */
export type ModelErrorCode =
  /**
   * The provider cannot be reached, broke off mid-response, or failed on its side (5xx, 529,
   * 408, 409, an error event mid-stream).
   */
  | 'unavailable'
  /** The provider limits this key's requests (429); `retry-after` says when to try again. */
  | 'rate_limited'
  /** The provider refused the request (400, 401, 403, 404, ...): change the key or request. */
  | 'refused'
  /** The response cannot be used (tool input that is not whole JSON, a message @x/wire rejects). */
  | 'bad_response'
  /** Anything else the call threw. */
  | 'unexpected';

/**
 * A model call failed; `retryable` says whether trying again later may succeed (a provider
 * may say so against its `code`, with `x-should-retry`).
 *
 * @example
 * if (ModelError.is(error) && error.code === 'rate_limited') console.error('slow down');
 */
export class ModelError extends Error {
  readonly [modelMarker] = true;
  override readonly name = 'ModelError';
  readonly retryable: boolean;

  constructor(
    readonly code: ModelErrorCode,
    message: string,
    options: { retryable: boolean; cause?: unknown },
  ) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.retryable = options.retryable;
  }

  /** True for a `ModelError`, also one from another copy of this module. */
  static is(error: unknown): error is ModelError {
    return typeof error === 'object' && error !== null && modelMarker in error;
  }
}

/** Each failure's exit code (as `runner help exit-codes` has them) and the approval center's answer. */
export const FAILURES = {
  failed: {
    exitCode: 1,
    httpStatus: 500,
    httpCode: 'internal',
    httpMessage: 'internal error; the server log has the details',
  },
  usage: { exitCode: 2, httpStatus: 400, httpCode: 'invalid_request' },
  not_found: { exitCode: 3, httpStatus: 404, httpCode: 'not_found' },
  unavailable: {
    exitCode: 4,
    httpStatus: 503,
    httpCode: 'unavailable',
    httpMessage: 'the database is unavailable; try again shortly',
  },
  conflict: { exitCode: 5, httpStatus: 409, httpCode: 'conflict' },
  forbidden: { exitCode: 6, httpStatus: 403, httpCode: 'forbidden' },
  // The answer came after the question's deadline: its default is applied instead.
  expired: { exitCode: 7, httpStatus: 410, httpCode: 'expired' },
} as const satisfies Record<
  Failure,
  { exitCode: number; httpStatus: number; httpCode: string; httpMessage?: string }
>;

/**
 * Why PostgreSQL could not be used, in words, from the driver error among `error`'s causes
 * (connection errors by their Node code, server refusals by SQLSTATE); undefined when none
 * is recognised.
 */
export function postgresCause(error: unknown): string | undefined {
  let current = error as { code?: unknown; message?: string; cause?: unknown } | undefined;
  for (let depth = 0; current && depth < 8; depth++) {
    switch (current.code) {
      case 'ECONNREFUSED':
        return 'connection refused (is the server running, on that port?)';
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return 'unknown host';
      case 'CONNECT_TIMEOUT':
      case 'ETIMEDOUT':
        return 'the connection timed out';
      case 'ECONNRESET':
        return 'the server closed the connection';
      case '3D000':
        return `the database does not exist (${current.message})`;
      case '28P01':
      case '28000':
        return `authentication failed (${current.message})`;
      case '57P03':
        return `the server is not accepting connections now (${current.message})`;
      case '53300':
        return `too many connections (${current.message})`;
    }
    current = current.cause as typeof current;
  }
  return undefined;
}
