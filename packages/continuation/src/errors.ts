const marker = Symbol.for('@x/continuation.ContinuationError');

/** What went wrong, as a stable string to branch on. */
export type ContinuationErrorCode =
  /** No continuation is stored under that interaction id. */
  | 'not_found'
  /** The continuation was already consumed: resuming it again would re-run side effects. */
  | 'already_resolved'
  /** The suspending tool use is not the only tool use of its assistant message. */
  | 'not_singleton'
  /** The answer is not a `tool_result` for the suspended `tool_use_id`. */
  | 'mismatched_result'
  /**
   * The input or a stored record does not match the schema (`field` names the bad field), or
   * a database refused a value of the input (SQLSTATE class 22, in `sqlState`).
   */
  | 'invalid'
  /** A stored record has a `version` this code does not know (written by newer code). */
  | 'unsupported_version'
  /** An id that would become a path segment is not a safe file name. */
  | 'unsafe_id'
  /**
   * The answer came after the suspension's deadline: the deadline's default is what resumes
   * the turn (the AI SDK bridge's `expiredModelMessages`), not the late answer.
   */
  | 'expired'
  /** The store itself failed (I/O, database); `cause` holds the original error. */
  | 'unavailable'
  /**
   * A run queue's lease on a run was taken over by another worker (it expired): the
   * worker that lost it committed nothing, and must drop its result.
   */
  | 'lease_lost';

/** Options of {@link ContinuationError}. */
export interface ContinuationErrorOptions {
  /** The interaction the error is about, when known. */
  interactionId?: string;
  /** For `invalid`: the (snake_case or camelCase) path of the first bad field, e.g. `messages[2].content`. */
  field?: string;
  /** For `unavailable` (and `invalid` from a value a database refused): the SQLSTATE it reported, e.g. `57P01` or `22021`. */
  sqlState?: string;
  /** The original failure. */
  cause?: unknown;
}

/**
 * The one error `@x/continuation` and its adapters throw. Branch on `code`
 * (or `ContinuationError.is(err)`), never on the message text.
 *
 * @example
 * try {
 *   await store.load(id);
 * } catch (err) {
 *   if (ContinuationError.is(err) && err.code === 'already_resolved') return; // answered already
 *   throw err;
 * }
 */
export class ContinuationError extends Error {
  readonly [marker] = true;
  override readonly name = 'ContinuationError';
  readonly code: ContinuationErrorCode;
  readonly interactionId: string | undefined;
  readonly field: string | undefined;
  /** The SQLSTATE of a database failure, when the database gave one. */
  readonly sqlState: string | undefined;

  constructor(
    code: ContinuationErrorCode,
    message: string,
    options: ContinuationErrorOptions = {},
  ) {
    super(
      `[@x/continuation] ${message}`,
      options.cause === undefined ? {} : { cause: options.cause },
    );
    this.code = code;
    this.interactionId = options.interactionId;
    this.field = options.field;
    this.sqlState = options.sqlState;
  }

  /** True for a `ContinuationError`, also one thrown by another installed copy of this package. */
  static is(error: unknown): error is ContinuationError {
    return typeof error === 'object' && error !== null && marker in error;
  }

  /** True when `error` is a `ContinuationError` with that `code`. */
  static hasCode(error: unknown, code: ContinuationErrorCode): error is ContinuationError {
    return ContinuationError.is(error) && error.code === code;
  }
}
