import { ContinuationError } from '@x/continuation';
import { failureReason, isRefusedValue, refusedValueReason, sqlStateOf } from '@x/postgres-kit';

/**
 * Normalises a database failure to the interface's `unavailable` code, or `invalid` for a
 * value the database refused (SQLSTATE class 22, never an outage) (the reason in the
 * message, the SQLSTATE in `sqlState`, the driver error kept as `cause`); our own errors pass
 * through.
 */
export function wrapDatabaseError(
  error: unknown,
  doing: string,
  interactionId?: string,
): ContinuationError {
  if (ContinuationError.is(error)) return error;
  // A value the database refused (SQLSTATE class 22) is the caller's input, not an outage.
  if (isRefusedValue(error)) {
    const sqlState = sqlStateOf(error);
    return new ContinuationError('invalid', `${doing} refused: ${refusedValueReason(error)}`, {
      ...(interactionId === undefined ? {} : { interactionId }),
      ...(sqlState === undefined ? {} : { sqlState }),
      cause: error,
    });
  }
  const reason = failureReason(error, 'the x_continuation.suspensions table is missing');
  const sqlState = sqlStateOf(error);
  return new ContinuationError('unavailable', `${doing} failed: ${reason}`, {
    ...(interactionId === undefined ? {} : { interactionId }),
    ...(sqlState === undefined ? {} : { sqlState }),
    cause: error,
  });
}
