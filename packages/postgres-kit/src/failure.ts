import { MigrationError } from './migration-error.js';

/**
 * The SQLSTATE of a driver error, also when drizzle wrapped it (`DrizzleQueryError.cause`).
 * Only a five-character SQLSTATE counts: never the message text, never a Node errno.
 *
 * @example
 * if (sqlStateOf(error) === '23505') throw duplicate(token, error);
 */
export function sqlStateOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * True when the database refused a value it was given: SQLSTATE class 22, "data exception"
 * (a NUL in text, a malformed JSON escape, a number out of range, ...). That is the
 * caller's input, never an outage: a store answers it as bad input, not `unavailable`.
 *
 * @example
 * if (isRefusedValue(error)) throw new SessionError('invalid', refusedValueReason(error));
 */
export function isRefusedValue(error: unknown): boolean {
  return sqlStateOf(error)?.startsWith('22') ?? false;
}

/**
 * Why the database refused a value ({@link isRefusedValue}), as the end of a sentence: its
 * SQLSTATE and the server's words, e.g. `the database refused a value it was given
 * (SQLSTATE 22021: invalid byte sequence for encoding "UTF8": 0x00)`.
 */
export function refusedValueReason(error: unknown): string {
  return `the database refused a value it was given (SQLSTATE ${sqlStateOf(error)}: ${innermostMessage(error)})`;
}

// A high surrogate not followed by a low one, or a low one not after a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * What in `text` PostgreSQL cannot store as text or in JSON, as words for an error message,
 * or `undefined` when nothing: a NUL character (U+0000), or a lone surrogate (half of a
 * UTF-16 pair, which no UTF-8 text can hold). Check input with it before it reaches the
 * database, which would refuse it with a data exception ({@link isRefusedValue}).
 *
 * @example
 * const problem = unstorableText(answer.content);
 * if (problem) throw new Error(`the answer's content holds ${problem}`);
 */
export function unstorableText(text: string): string | undefined {
  if (text.includes('\0')) return 'a NUL character (U+0000)';
  const lone = LONE_SURROGATE.exec(text);
  if (lone) {
    const code = lone[0].charCodeAt(0).toString(16).toUpperCase();
    return `a lone surrogate (U+${code}, half of a UTF-16 pair)`;
  }
  return undefined;
}

/**
 * Why a database call failed, as the end of a sentence for a store's `unavailable` error:
 * a failed migration says which and the server's message (a {@link MigrationError}'s `reason`),
 * a missing schema or table says to run `migrate(db)`, a failure without a SQLSTATE is the
 * connection (with the driver's own words, e.g. a PGlite folder that does not exist), any
 * other names its SQLSTATE.
 *
 * @param missing what to say when the schema or a table is missing, e.g. `'the x_session tables are missing'`
 * @example
 * const reason = failureReason(error, 'the x_session tables are missing');
 * throw new SessionError('unavailable', `reading failed: ${reason}`, { cause: error });
 */
export function failureReason(error: unknown, missing: string): string {
  if (MigrationError.is(error)) return error.reason;
  const state = sqlStateOf(error);
  if (state === '42P01' || state === '3F000') return `${missing}; run migrate(db) first`;
  if (state === undefined) {
    return `the database could not be reached (${innermostMessage(error)}); check that it runs and that its address or data folder exists`;
  }
  return `SQLSTATE ${state}`;
}

/** The message of the deepest `cause` (drizzle wraps the driver's error), for a human. */
export function innermostMessage(error: unknown): string {
  let message = String(error);
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const text = (current as { message?: unknown }).message;
    if (typeof text === 'string' && text !== '') message = text;
    current = (current as { cause?: unknown }).cause;
  }
  return message;
}
