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
