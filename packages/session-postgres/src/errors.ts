import { failureReason, isRefusedValue, refusedValueReason, sqlStateOf } from '@x/postgres-kit';
import { SessionError } from '@x/session';

/**
 * Normalises a database failure to the store contract: a `SessionError` passes through;
 * `40001`/`40P01` (serialization failure, deadlock) become `conflict` (another writer won);
 * a refused value (SQLSTATE class 22: a NUL in text, ...) is `invalid`, the caller's input;
 * everything else is `unavailable` with the driver error as `cause`. Classified by SQLSTATE
 * only, never by message text.
 */
export function wrapDatabaseError(error: unknown, what: string, threadId?: string): SessionError {
  if (SessionError.is(error)) return error;
  const state = sqlStateOf(error);
  const details = {
    ...(threadId === undefined ? {} : { threadId }),
    ...(state === undefined ? {} : { sqlState: state }),
  };
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
  // A value the database refused (SQLSTATE class 22) is the caller's input, not an outage.
  if (isRefusedValue(error)) {
    return new SessionError('invalid', `${what} refused: ${refusedValueReason(error)}`, {
      cause: error,
      details,
    });
  }
  const reason = failureReason(error, 'the x_session tables are missing');
  return new SessionError('unavailable', `${what} failed: ${reason}`, { cause: error, details });
}
