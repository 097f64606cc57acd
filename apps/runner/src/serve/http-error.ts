import { ApprovalCenterError } from '@x/approval-center';
import { classifyFailure } from '../failure.js';

const marker = Symbol.for('runner.serve.HttpError');

/** Error codes the approval center's API answers with, in `{ "error": { "code" } }`. */
export type HttpErrorCode =
  | 'unauthorized'
  | 'forbidden'
  | 'forbidden_host'
  | 'cross_origin'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'invalid_json'
  | 'invalid_request'
  | 'invalid_answer'
  | 'pause_not_found'
  | 'already_answered'
  | 'expired'
  | 'not_found'
  | 'conflict'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'bad_request'
  | 'headers_too_large'
  | 'request_timeout'
  | 'too_many_connections'
  | 'unavailable'
  | 'internal';

/** A failed request: its status and a stable code for `{ "error": { "code", "message" } }`. */
export class HttpError extends Error {
  readonly [marker] = true;
  override readonly name = 'HttpError';

  constructor(
    readonly status: number,
    readonly code: HttpErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? {} : { cause });
  }

  /** True for an `HttpError`, also one from another copy of this module. */
  static is(error: unknown): error is HttpError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}

/**
 * The answer to `error`: itself when it is an {@link HttpError}, else what the runner's one
 * classifier says of it (`unexpected`: a failure to report, not the caller's doing).
 */
export function toHttpError(error: unknown): { error: HttpError; unexpected: boolean } {
  if (HttpError.is(error)) return { error, unexpected: false };
  // The approval center's identity errors carry their own status (401 has no exit code).
  if (ApprovalCenterError.is(error)) {
    return {
      error: new HttpError(
        error.status,
        httpCodeOf(error),
        error.reason,
        error.retryAfter === undefined ? undefined : { retryAfter: error.retryAfter },
        error,
      ),
      unexpected: false,
    };
  }
  // The runner's and the packages' typed errors answer as the CLI does (one classifier).
  const failure = classifyFailure(error);
  return {
    error: new HttpError(
      failure.httpStatus,
      failure.httpCode,
      failure.httpMessage,
      undefined,
      error,
    ),
    unexpected: failure.internal,
  };
}

/** The API's code of an approval center's error: its own, but for a bad option. */
function httpCodeOf(error: ApprovalCenterError): HttpErrorCode {
  return error.code === 'invalid_argument' ? 'invalid_request' : error.code;
}
