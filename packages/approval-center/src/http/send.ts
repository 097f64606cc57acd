import type { ServerResponse } from 'node:http';
import { withoutOrigin } from '@x/executive';
import { ApprovalCenterError, type ApprovalCenterErrorCode } from '../errors.js';

/** Headers every response carries. */
export const baseHeaders = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

/** Sends a JSON response. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...baseHeaders,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** The API's code of an error: its own, but for a bad option, which is the request's. */
function apiCodeOf(code: ApprovalCenterErrorCode): ApprovalCenterErrorCode {
  return code === 'invalid_argument' ? 'invalid_request' : code;
}

/** Sends `{ "error": { "code", "message", ...details } }` with the error's status. */
export function sendError(res: ServerResponse, error: ApprovalCenterError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A refusal that lifts with time (429) says when, as well as in its body.
  const retryAfter = error.retryAfter ?? error.details?.retryAfter;
  if (typeof retryAfter === 'number') res.setHeader('retry-after', String(retryAfter));
  sendJson(res, error.status, errorBody(error));
}

/** The API's `{ "error": { "code", "message", ...details } }` of an error. */
export function errorBody(error: ApprovalCenterError): {
  error: { code: ApprovalCenterErrorCode; message: string; [detail: string]: unknown };
} {
  return {
    error: {
      code: apiCodeOf(error.code),
      message: withoutOrigin(error.reason),
      ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }),
      ...error.details,
    },
  };
}

/** How an error is answered: as which {@link ApprovalCenterError}, and whether to report it. */
export interface ErrorAnswer {
  error: ApprovalCenterError;
  /** A failure that is not the caller's doing: given to `onError` as well. */
  unexpected: boolean;
}

/**
 * How the host's own errors are answered (the runner passes its one classifier of every
 * package's errors); `undefined` leaves the error to the default: a 500 that says nothing
 * of the server, reported to `onError`.
 */
export type ErrorClassifier = (error: unknown) => ErrorAnswer | undefined;

/** The answer to `error`: itself when it is an {@link ApprovalCenterError}, else `classify`'s. */
export function answerOf(error: unknown, classify?: ErrorClassifier): ErrorAnswer {
  if (ApprovalCenterError.is(error)) return { error, unexpected: false };
  return (
    classify?.(error) ?? {
      error: new ApprovalCenterError('internal', 'internal error; the server log has the details', {
        cause: error,
      }),
      unexpected: true,
    }
  );
}
