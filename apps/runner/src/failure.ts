import { ApprovalCenterError } from '@x/approval-center';
import { AskUserError } from '@x/askuser';
import { ContinuationError } from '@x/continuation';
import { ExecutiveError, withoutOrigin } from '@x/executive';
import { NotifyError } from '@x/notify';
import { isRefusedValue, refusedValueReason } from '@x/postgres-kit';
import { SessionError } from '@x/session';
import { FAILURES, type Failure, ModelError, postgresCause, RunnerError } from './errors.js';

// Apart from errors.ts: the packages' error classes load their packages, which a command
// that fails before it opens storage (bad usage, help) or goes through serve never needs.

/** How the command line and the approval center's API answer an error. */
interface ClassifiedFailure {
  failure: Failure;
  exitCode: number;
  httpStatus: number;
  /** The API's `{ "error": { "code" } }`. */
  httpCode: (typeof FAILURES)[Failure]['httpCode'];
  /** The error's message without a package's origin: what the command line says. */
  message: string;
  /**
   * What the API says: the message, or for a failure that is the operator's, not the
   * caller's (`unavailable`, `failed`), words that tell nothing of the server.
   */
  httpMessage: string;
  /** The failure is the operator's to look into: the server logs the error itself. */
  internal: boolean;
}

/** Classifies any error the runner meets, by the runner's and the packages' error codes. */
export function failureOf(error: unknown): Failure {
  if (RunnerError.is(error)) return error.code;
  // A model's failure fails the command or the run: its causes (a refused connection to the
  // provider) are not the database's.
  if (ModelError.is(error)) return 'failed';
  if ((error as { code?: unknown })?.code?.toString().startsWith('ERR_PARSE_ARGS')) return 'usage';
  if (AskUserError.is(error)) {
    switch (error.code) {
      case 'invalid_answer':
      case 'invalid_pause':
      case 'invalid_argument':
        return 'usage';
      case 'not_found':
        return 'not_found';
      case 'duplicate':
        return 'conflict';
      case 'forbidden':
        return 'forbidden';
      case 'expired':
        return 'expired';
      case 'unavailable':
        return 'unavailable';
      default:
        return 'failed';
    }
  }
  if (ContinuationError.is(error)) {
    switch (error.code) {
      case 'not_found':
      case 'already_resolved':
        return 'not_found';
      case 'unsafe_id':
        return 'usage';
      case 'unavailable':
        return 'unavailable';
      case 'lease_lost':
        return 'conflict';
      case 'expired':
        return 'expired';
      default:
        return 'failed';
    }
  }
  if (ExecutiveError.is(error)) {
    switch (error.code) {
      case 'already_answered':
      case 'lease_lost':
        return 'conflict';
      case 'usage':
      case 'not_found':
      case 'forbidden':
      case 'expired':
      case 'conflict':
      case 'unavailable':
        return error.code;
      default:
        return 'failed';
    }
  }
  if (ApprovalCenterError.is(error)) {
    switch (error.code) {
      case 'invalid_argument':
      case 'invalid_request':
      case 'invalid_json':
      case 'invalid_answer':
      case 'bad_request':
      case 'unsupported_media_type':
      case 'payload_too_large':
      case 'method_not_allowed':
        return 'usage';
      case 'unauthorized':
      case 'rate_limited':
      case 'forbidden_host':
      case 'cross_origin':
        return 'forbidden';
      case 'pause_not_found':
        return 'not_found';
      case 'already_answered':
        return 'conflict';
      case 'too_many_connections':
      case 'request_timeout':
      case 'headers_too_large':
        return 'unavailable';
      case 'internal':
        return 'failed';
      default:
        return error.code;
    }
  }
  if (NotifyError.is(error)) {
    switch (error.code) {
      case 'invalid_link':
        return 'forbidden';
      case 'expired_link':
        return 'expired';
      case 'used_link':
        return 'conflict';
      case 'invalid_argument':
        return 'usage';
      case 'unavailable':
        return 'unavailable';
      default:
        return 'failed';
    }
  }
  if (SessionError.is(error)) {
    switch (error.code) {
      case 'conflict':
        return 'conflict';
      case 'unavailable':
        return 'unavailable';
      case 'unsafe_id':
        return 'usage';
      case 'not_found':
        return 'not_found';
      default:
        return 'failed';
    }
  }
  // A value the database refused (SQLSTATE class 22: a NUL in text, ...) is the caller's
  // input, never the database being away.
  if (isRefusedValue(error)) return 'usage';
  // Anyone else's error is the database being away when a cause says so (a driver error, a
  // store's `unavailable`), else a failure.
  const cause = (error as { cause?: unknown })?.cause;
  if (postgresCause(error) !== undefined || (cause != null && failureOf(cause) === 'unavailable')) {
    return 'unavailable';
  }
  return 'failed';
}

/**
 * The one classifier: what an error is, and how the command line (exit code, message) and
 * the approval center (HTTP status, code, message) answer it.
 *
 * @example
 * const { exitCode, message } = classifyFailure(error);
 */
export function classifyFailure(error: unknown): ClassifiedFailure {
  const failure = failureOf(error);
  const row: (typeof FAILURES)[Failure] = FAILURES[failure];
  // A driver's own error says its query and parameters: of a refused value, only the reason.
  const typed =
    RunnerError.is(error) ||
    AskUserError.is(error) ||
    ContinuationError.is(error) ||
    ExecutiveError.is(error) ||
    NotifyError.is(error) ||
    ApprovalCenterError.is(error) ||
    SessionError.is(error);
  const text =
    failure === 'usage' && !typed && isRefusedValue(error)
      ? refusedValueReason(error)
      : error instanceof Error
        ? error.message
        : String(error);
  const message = withoutOrigin(text);
  return {
    failure,
    exitCode: row.exitCode,
    httpStatus: row.httpStatus,
    httpCode: row.httpCode,
    message,
    httpMessage: 'httpMessage' in row ? row.httpMessage : message,
    internal: 'httpMessage' in row,
  };
}
