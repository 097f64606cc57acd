import { failureReason, sqlStateOf } from '@x/postgres-kit';

const marker = Symbol.for('@x/langgraph.LangGraphError');

/** What went wrong, as a stable string to branch on. */
export type LangGraphErrorCode =
  /**
   * A call's config or arguments cannot name what LangGraph asked for (no `thread_id`, a
   * `checkpoint_id` missing for `putWrites`, an id that is not a string), or the database
   * refused a value as data (a `\u0000` in metadata); nothing was written.
   */
  | 'invalid'
  /** The database failed or is not migrated; `cause` holds the driver's error. */
  | 'unavailable';

/** Options of {@link LangGraphError}. */
export interface LangGraphErrorOptions {
  /** The thread the error is about, when known. */
  threadId?: string;
  /** The SQLSTATE the database reported, e.g. `42P01` or `57P01`. */
  sqlState?: string;
  /** The original failure. */
  cause?: unknown;
}

/**
 * The one error `@x/langgraph` throws. Branch on `code` (or `LangGraphError.is(err)`), never
 * on the message text.
 *
 * @example
 * try {
 *   await graph.invoke(input, { configurable: { thread_id } });
 * } catch (err) {
 *   if (LangGraphError.hasCode(err, 'unavailable')) return retryLater(err.sqlState);
 *   throw err;
 * }
 */
export class LangGraphError extends Error {
  readonly [marker] = true;
  override readonly name = 'LangGraphError';
  readonly code: LangGraphErrorCode;
  readonly threadId: string | undefined;
  /** The SQLSTATE of a database failure, when the database gave one. */
  readonly sqlState: string | undefined;

  constructor(code: LangGraphErrorCode, message: string, options: LangGraphErrorOptions = {}) {
    super(`[@x/langgraph] ${message}`, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.threadId = options.threadId;
    this.sqlState = options.sqlState;
  }

  /** True for a `LangGraphError`, also one thrown by another installed copy of this package. */
  static is(error: unknown): error is LangGraphError {
    return typeof error === 'object' && error !== null && marker in error;
  }

  /** True when `error` is a `LangGraphError` with that `code`. */
  static hasCode(error: unknown, code: LangGraphErrorCode): error is LangGraphError {
    return LangGraphError.is(error) && error.code === code;
  }
}

// Data the server refuses to store: a NUL in text or JSON, bytes that are not UTF-8, a value
// over a size limit. The caller's value is at fault, not the database.
const REFUSED_DATA = new Set(['22P05', '22021', '54000']);

/**
 * Normalises a database failure: a `LangGraphError` passes through; data the server refuses
 * is `invalid`; everything else is `unavailable`, with the driver error as `cause`.
 * Classified by SQLSTATE only, never by message text.
 */
export function wrapDatabaseError(error: unknown, what: string, threadId?: string): LangGraphError {
  if (LangGraphError.is(error)) return error;
  const sqlState = sqlStateOf(error);
  const options = {
    cause: error,
    ...(threadId === undefined ? {} : { threadId }),
    ...(sqlState === undefined ? {} : { sqlState }),
  };
  if (sqlState !== undefined && REFUSED_DATA.has(sqlState)) {
    return new LangGraphError(
      'invalid',
      `${what}: the database refused a value (SQLSTATE ${sqlState}); strings must not contain \\u0000`,
      options,
    );
  }
  const reason = failureReason(error, 'the x_langgraph tables are missing');
  return new LangGraphError('unavailable', `${what} failed: ${reason}`, options);
}
