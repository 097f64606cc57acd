import { failureReason, isRefusedValue, refusedValueReason, sqlStateOf } from '@x/postgres-kit';

const marker = Symbol.for('@x/askuser.AskUserError');

/** What went wrong, as a stable string to branch on. */
export type AskUserErrorCode =
  /** No pending pause has the token: never inserted, or already resolved. `tokens` lists them. */
  | 'not_found'
  /** An answer is malformed (action not accept/decline/cancel, content not a string, a token twice in a batch). */
  | 'invalid_answer'
  /** The fields given to `insert` are malformed (an empty token, a fractional priority, ...). */
  | 'invalid_pause'
  /** An argument other than a pause or an answer is malformed (e.g. an invalid cutoff date). */
  | 'invalid_argument'
  /**
   * An answer that names its identity is refused: the identity is outside the question's
   * audience, or it is the requester of a question its requester may not answer.
   */
  | 'forbidden'
  /**
   * An answer came at or after the question's deadline: refused, nothing changes (the
   * deadline's default is, or will be, applied instead: the outcome `expired`).
   */
  | 'expired'
  /** A pause with this token already exists (SQLSTATE 23505). */
  | 'duplicate'
  /**
   * The database failed or is unreachable, or the table is missing (run `migrate`); see
   * `sqlState` and `cause`. Never a value the database refused (SQLSTATE class 22): that is
   * `invalid_answer`, `invalid_pause` or `invalid_argument`.
   */
  | 'unavailable'
  /** A stored row does not parse (e.g. `resumed_answer` written by another tool). */
  | 'corrupt';

/** Options of {@link AskUserError}. */
export interface AskUserErrorOptions {
  /** The tokens the error is about (for `not_found`: every token that was not pending). */
  tokens?: readonly string[];
  /** The SQLSTATE the database reported, e.g. `42P01` (table missing) or `57P01` (terminated). */
  sqlState?: string;
  /** The original failure (the driver error, a zod error). */
  cause?: unknown;
}

/**
 * The one error `@x/askuser` throws. Branch on `code` (or {@link AskUserError.hasCode}),
 * never on the message text; a database's SQLSTATE is kept in `sqlState`, the driver error
 * in `cause`. Nothing is changed when a call fails with it.
 *
 * @example
 * try {
 *   await store.markResumed(token, { action: 'accept', content: 'yes' });
 * } catch (err) {
 *   if (AskUserError.hasCode(err, 'not_found')) console.log('already answered');
 *   else throw err;
 * }
 */
export class AskUserError extends Error {
  readonly [marker] = true;
  override readonly name = 'AskUserError';
  readonly code: AskUserErrorCode;
  /** The tokens the error is about; empty when it is about none in particular. */
  readonly tokens: readonly string[];
  /** The SQLSTATE of a database failure, when the database gave one. */
  readonly sqlState: string | undefined;

  constructor(code: AskUserErrorCode, message: string, options: AskUserErrorOptions = {}) {
    super(`[@x/askuser] ${message}`, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.tokens = options.tokens ?? [];
    this.sqlState = options.sqlState;
  }

  /** True for an `AskUserError`, also one thrown by another installed copy of this package. */
  static is(error: unknown): error is AskUserError {
    return typeof error === 'object' && error !== null && marker in error;
  }

  /** True when `error` is an `AskUserError` with that `code`. */
  static hasCode(error: unknown, code: AskUserErrorCode): error is AskUserError {
    return AskUserError.is(error) && error.code === code;
  }
}

/** The `not_found` error for tokens that name no pending pause. */
export function pauseNotFound(tokens: readonly string[], message?: string): AskUserError {
  const listed = tokens.map((t) => JSON.stringify(t)).join(', ');
  return new AskUserError(
    'not_found',
    message ??
      `no pending pause for token${tokens.length === 1 ? '' : 's'} ${listed}: it does not exist or was already resolved; list pending pauses to find open tokens`,
    { tokens },
  );
}

/** The `expired` error for tokens whose deadline refuses an answer. */
export function pauseExpired(tokens: readonly string[], before?: string): AskUserError {
  const listed = tokens.map((t) => JSON.stringify(t)).join(', ');
  const one = tokens.length === 1;
  return new AskUserError(
    'expired',
    `${before ? `${before}: ` : ''}the question${one ? '' : 's'} ${listed} reached ${one ? 'its' : 'their'} deadline before the answer came: ${one ? 'its' : 'their'} default is applied instead, and nothing was changed`,
    { tokens },
  );
}

/**
 * Wraps a database failure as `duplicate` (23505), as `refused` (default `invalid_argument`)
 * when the database refused a value given to it (SQLSTATE class 22: bad input, never an
 * outage), else as `unavailable`; our own errors pass through.
 */
export function wrapDatabaseError(
  error: unknown,
  doing: string,
  token?: string,
  refused: 'invalid_answer' | 'invalid_pause' | 'invalid_argument' = 'invalid_argument',
): AskUserError {
  if (AskUserError.is(error)) return error;
  const sqlState = sqlStateOf(error);
  const tokens = token === undefined ? [] : [token];
  if (isRefusedValue(error)) {
    return new AskUserError(refused, `${doing} refused: ${refusedValueReason(error)}`, {
      tokens,
      ...(sqlState === undefined ? {} : { sqlState }),
      cause: error,
    });
  }
  if (sqlState === '23505' && token !== undefined) {
    return new AskUserError(
      'duplicate',
      `a pause with token ${JSON.stringify(token)} already exists: use a fresh token per question`,
      { tokens, sqlState, cause: error },
    );
  }
  const reason = failureReason(error, 'the aura.paused_states table is missing');
  return new AskUserError('unavailable', `${doing} failed: ${reason}`, {
    tokens,
    ...(sqlState === undefined ? {} : { sqlState }),
    cause: error,
  });
}
