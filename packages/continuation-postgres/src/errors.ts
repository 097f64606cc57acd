import { ContinuationError } from '@x/continuation';

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

/**
 * Normalises a database failure to the interface's `unavailable` code (the SQLSTATE is
 * named in the message, the driver error kept as `cause`); our own errors pass through.
 */
export function wrapDatabaseError(
  error: unknown,
  doing: string,
  interactionId?: string,
): ContinuationError {
  if (ContinuationError.is(error)) return error;
  const state = sqlStateOf(error);
  const hint =
    state === '42P01' || state === '3F000'
      ? 'the x_continuation.suspensions table is missing; run migrate(db) first'
      : state === undefined
        ? 'the database connection failed; check that the database is reachable'
        : `SQLSTATE ${state}`;
  return new ContinuationError('unavailable', `${doing} failed: ${hint}`, {
    ...(interactionId === undefined ? {} : { interactionId }),
    cause: error,
  });
}
