const notFoundMarker = Symbol.for('@x/askuser.PauseNotFoundError');
const invalidAnswerMarker = Symbol.for('@x/askuser.InvalidAnswerError');
const invalidPauseMarker = Symbol.for('@x/askuser.InvalidPauseError');
const duplicateMarker = Symbol.for('@x/askuser.DuplicatePauseError');
const storeMarker = Symbol.for('@x/askuser.AskUserStoreError');

function options(cause: unknown): ErrorOptions {
  return cause === undefined ? {} : { cause };
}

/**
 * The token names no pause that is still pending: it was never inserted, or it was already
 * resolved (answered, batch-answered or auto-resolved). Nothing was changed.
 * `tokens` lists every offending token (one for single calls, possibly several for a batch).
 */
export class PauseNotFoundError extends Error {
  readonly [notFoundMarker] = true;
  override readonly name = 'PauseNotFoundError';
  readonly code = 'pause_not_found' as const;
  readonly tokens: readonly string[];

  constructor(tokens: readonly string[], message?: string) {
    super(
      message ??
        `[@x/askuser] no pending pause for token${tokens.length === 1 ? '' : 's'} ${tokens
          .map((t) => JSON.stringify(t))
          .join(
            ', ',
          )}: it does not exist or was already resolved; list pending pauses to find open tokens`,
    );
    this.tokens = tokens;
  }

  /** True for a `PauseNotFoundError`, also one from another installed copy of this package. */
  static is(error: unknown): error is PauseNotFoundError {
    return typeof error === 'object' && error !== null && notFoundMarker in error;
  }
}

/**
 * A resume answer is malformed: the action is not `accept`, `decline` or `cancel`, the
 * content is not a string, or a batch names a token twice. Nothing was changed.
 */
export class InvalidAnswerError extends Error {
  readonly [invalidAnswerMarker] = true;
  override readonly name = 'InvalidAnswerError';
  readonly code = 'invalid_answer' as const;
  /** The token whose answer is bad, when known. */
  readonly token: string | undefined;

  constructor(message: string, token?: string, cause?: unknown) {
    super(`[@x/askuser] ${message}`, options(cause));
    this.token = token;
  }

  /** True for an `InvalidAnswerError`, also one from another installed copy of this package. */
  static is(error: unknown): error is InvalidAnswerError {
    return typeof error === 'object' && error !== null && invalidAnswerMarker in error;
  }
}

/** The fields given to `insert` are malformed (e.g. an empty token, a fractional priority). */
export class InvalidPauseError extends Error {
  readonly [invalidPauseMarker] = true;
  override readonly name = 'InvalidPauseError';
  readonly code = 'invalid_pause' as const;

  constructor(message: string, cause?: unknown) {
    super(`[@x/askuser] ${message}`, options(cause));
  }

  /** True for an `InvalidPauseError`, also one from another installed copy of this package. */
  static is(error: unknown): error is InvalidPauseError {
    return typeof error === 'object' && error !== null && invalidPauseMarker in error;
  }
}

/** A pause with this token already exists (SQLSTATE 23505 on the primary key). */
export class DuplicatePauseError extends Error {
  readonly [duplicateMarker] = true;
  override readonly name = 'DuplicatePauseError';
  readonly code = 'duplicate_pause' as const;
  readonly token: string;

  constructor(token: string, cause?: unknown) {
    super(
      `[@x/askuser] a pause with token ${JSON.stringify(token)} already exists: use a fresh token per question`,
      options(cause),
    );
    this.token = token;
  }

  /** True for a `DuplicatePauseError`, also one from another installed copy of this package. */
  static is(error: unknown): error is DuplicatePauseError {
    return typeof error === 'object' && error !== null && duplicateMarker in error;
  }
}

/**
 * Any other database failure. `code` is the SQLSTATE reported by the driver (e.g. `40P01`
 * for a deadlock, `57P01` for a terminated connection, `42P01` when `migrate(db)` was not
 * run), or `connection` when the driver failed without one, or `corrupt_row` when a stored
 * row does not parse. The driver error is kept as `cause`.
 */
export class AskUserStoreError extends Error {
  readonly [storeMarker] = true;
  override readonly name = 'AskUserStoreError';
  readonly code: string;

  constructor(code: string, message: string, cause?: unknown) {
    super(`[@x/askuser] ${message}`, options(cause));
    this.code = code;
  }

  /** True for an `AskUserStoreError`, also one from another installed copy of this package. */
  static is(error: unknown): error is AskUserStoreError {
    return typeof error === 'object' && error !== null && storeMarker in error;
  }
}

/** The SQLSTATE of a driver error, looked up through drizzle's `DrizzleQueryError` wrapper. */
export function sqlStateOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Wraps an unexpected driver failure; our own errors pass through unchanged. */
export function wrapDatabaseError(error: unknown, doing: string): Error {
  if (
    PauseNotFoundError.is(error) ||
    InvalidAnswerError.is(error) ||
    InvalidPauseError.is(error) ||
    DuplicatePauseError.is(error) ||
    AskUserStoreError.is(error)
  ) {
    return error;
  }
  const state = sqlStateOf(error);
  const hint =
    state === '42P01' || state === '3F000'
      ? ': the aura.paused_states table is missing; run migrate(db) first'
      : state === undefined
        ? ': the database connection failed; check that the database is reachable'
        : `: SQLSTATE ${state}`;
  return new AskUserStoreError(state ?? 'connection', `${doing} failed${hint}`, error);
}
