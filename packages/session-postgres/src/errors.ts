import { SessionError } from '@x/session';

/** The SQLSTATE of a driver error, also when drizzle wrapped it (`DrizzleQueryError.cause`). */
export function sqlState(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    if (
      typeof e === 'object' &&
      e !== null &&
      'code' in e &&
      typeof e.code === 'string' &&
      /^[0-9A-Z]{5}$/.test(e.code)
    ) {
      return e.code;
    }
    e = typeof e === 'object' && e !== null && 'cause' in e ? e.cause : undefined;
  }
  return undefined;
}

/**
 * Normalises a database failure to the store contract: a `SessionError` passes through;
 * `40001`/`40P01` (serialization failure, deadlock) become `conflict` (another writer won);
 * everything else is `unavailable` with the driver error as `cause`. Classified by SQLSTATE
 * only, never by message text.
 */
export function wrapDatabaseError(error: unknown, what: string, threadId?: string): SessionError {
  if (SessionError.is(error)) return error;
  const state = sqlState(error);
  const details = threadId === undefined ? {} : { threadId };
  if (state === '40001' || state === '40P01') {
    return new SessionError(
      'conflict',
      `${what}: a concurrent writer won (SQLSTATE ${state}); get the thread again and retry`,
      {
        cause: error,
        details,
      },
    );
  }
  const hint =
    state === '42P01' || state === '3F000'
      ? ': the x_session tables are missing; run migrate(db) first'
      : state === undefined
        ? ': the database could not be reached or failed'
        : ` (SQLSTATE ${state})`;
  return new SessionError('unavailable', `${what} failed${hint}`, { cause: error, details });
}
