import { ApprovalCenterError } from '@x/approval-center';
import type { ErrorAnswer } from '@x/approval-center/http';
import { classifyFailure } from '../failure.js';

/**
 * How the approval center answers an error that is not its own: as the runner's one
 * classifier says of it (`unexpected`: a failure to report, not the caller's doing).
 */
export function toHttpError(error: unknown): ErrorAnswer {
  if (ApprovalCenterError.is(error)) return { error, unexpected: false };
  const failure = classifyFailure(error);
  return {
    error: new ApprovalCenterError(failure.httpCode, failure.httpMessage, { cause: error }),
    unexpected: failure.internal,
  };
}
