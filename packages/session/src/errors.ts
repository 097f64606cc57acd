const marker = Symbol.for('@x/session.SessionError');

/** What went wrong, as a stable string to branch on. */
export type SessionErrorCode =
  /** An interrupt method that parks the current tool call was used outside a tool call. */
  | 'no_current_tool_call'
  /** The current tool call already has a pending interrupt. */
  | 'interrupt_pending'
  /** No pending interrupt has that id (unknown, or already resolved). */
  | 'interrupt_not_found'
  /** The stored revision is not the one the writer read: someone else wrote first. */
  | 'conflict'
  /**
   * The input does not match its schema (checkpoint, interrupt, state value, ...), or a
   * database refused a value of it (SQLSTATE class 22, in `details.sqlState`).
   */
  | 'invalid'
  /** A persisted record has a format version this code does not know. */
  | 'unsupported_version'
  /** A thread id is not safe to use as a file name / key. */
  | 'unsafe_id'
  /** The thing asked for does not exist. */
  | 'not_found'
  /** The storage behind a store failed (disk, database connection, ...); retry later. */
  | 'unavailable';

/** Extra facts some errors carry, for logs and for retry logic. */
export interface SessionErrorDetails {
  /** The thread the failing store call was about. */
  threadId?: string;
  /** For `conflict`: the revision the writer expected (`null`: it expected no record). */
  expectedRevision?: number | null;
  /** For `conflict`: the revision actually stored (`null`: there is no live record). */
  actualRevision?: number | null;
  /** For `invalid`: where in the input the problem is. */
  path?: ReadonlyArray<string | number>;
  /** For `unsupported_version`: the version found. */
  version?: unknown;
  /** For an `invalid` checkpoint over the size limit: its size and the limit, in bytes. */
  bytes?: number;
  limit?: number;
  /** For `unavailable` and `conflict` from a database: the SQLSTATE it reported, e.g. `42P07`. */
  sqlState?: string;
}

/**
 * The one error family of `@x/session`. Branch on `code` (or use {@link SessionError.is} /
 * {@link SessionError.hasCode}), never on the message text. `cause` keeps the original failure.
 *
 * @example
 * try {
 *   await store.put(threadId, checkpoint, { expectedRevision: revision });
 * } catch (err) {
 *   if (SessionError.hasCode(err, 'conflict')) reloadAndRetry();
 *   else throw err;
 * }
 */
export class SessionError extends Error {
  readonly [marker] = true;
  override readonly name = 'SessionError';
  readonly code: SessionErrorCode;
  readonly details: SessionErrorDetails;

  constructor(
    code: SessionErrorCode,
    message: string,
    options: { cause?: unknown; details?: SessionErrorDetails } = {},
  ) {
    super(`[@x/session] ${message}`, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? {};
  }

  /** True for a `SessionError`, also one thrown by another installed copy of this package. */
  static is(error: unknown): error is SessionError {
    return typeof error === 'object' && error !== null && marker in error;
  }

  /** True for a `SessionError` with the given `code`. */
  static hasCode(error: unknown, code: SessionErrorCode): error is SessionError {
    return SessionError.is(error) && error.code === code;
  }
}
