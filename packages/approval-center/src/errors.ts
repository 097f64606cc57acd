const marker = Symbol.for('@x/approval-center.ApprovalCenterError');

/** What went wrong, as a stable string to branch on; each answers with one HTTP status. */
export type ApprovalCenterErrorCode =
  /** An option is missing, malformed or does not fit the provider (nothing was started). */
  | 'invalid_argument'
  /** The caller did not prove who they are: a bad token, a sign-in that cannot be finished. */
  | 'unauthorized'
  /** The caller is known but has no role here. */
  | 'forbidden'
  /** What was asked for is not set up (a page sign-in without a client). */
  | 'not_found'
  /** Too many failed sign-ins from one address or as one name: wait `retryAfter` seconds. */
  | 'rate_limited'
  /** The identity provider, or the database, did not answer. */
  | 'unavailable'
  /** A request on a loopback bind named a host that is not this machine (DNS rebinding). */
  | 'forbidden_host'
  /** A write from a page of another origin. */
  | 'cross_origin'
  /** A write whose body is not JSON. */
  | 'unsupported_media_type'
  /** A body over the limit (`details.limit` bytes). */
  | 'payload_too_large'
  /** A body that is not UTF-8 JSON. */
  | 'invalid_json'
  /** A body or query that does not fit the route's schema. */
  | 'invalid_request'
  /** An answer that does not fit its question. */
  | 'invalid_answer'
  /** No question has that token. */
  | 'pause_not_found'
  /** The question was answered already. */
  | 'already_answered'
  /** The question's deadline passed. */
  | 'expired'
  /** The request lost a race with another writer. */
  | 'conflict'
  /** The route takes other methods (the `allow` header names them). */
  | 'method_not_allowed'
  /** The request is not well-formed HTTP (a header twice, ...). */
  | 'bad_request'
  /** The request's headers are too large. */
  | 'headers_too_large'
  /** The request did not arrive in time. */
  | 'request_timeout'
  /** The server keeps no more connections open. */
  | 'too_many_connections'
  /** Something failed that is not the caller's doing (the server logs it). */
  | 'internal';

/** The HTTP status each {@link ApprovalCenterErrorCode} answers with. */
export const HTTP_STATUS_OF: Readonly<Record<ApprovalCenterErrorCode, number>> = {
  invalid_argument: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  rate_limited: 429,
  unavailable: 503,
  forbidden_host: 403,
  cross_origin: 403,
  unsupported_media_type: 415,
  payload_too_large: 413,
  invalid_json: 400,
  invalid_request: 400,
  invalid_answer: 400,
  pause_not_found: 404,
  already_answered: 409,
  expired: 410,
  conflict: 409,
  method_not_allowed: 405,
  bad_request: 400,
  headers_too_large: 431,
  request_timeout: 408,
  too_many_connections: 503,
  internal: 500,
};

/**
 * The one error `@x/approval-center` throws. Branch on `code` (or
 * `ApprovalCenterError.hasCode(err, ...)`), never on the message text; `status` is the HTTP
 * status the approval center answers it with.
 *
 * @example
 * try {
 *   operator = await oidc.verifyBearer(token);
 * } catch (err) {
 *   if (ApprovalCenterError.hasCode(err, 'unauthorized')) return reply(401, err.reason);
 *   throw err;
 * }
 */
export class ApprovalCenterError extends Error {
  readonly [marker] = true;
  override readonly name = 'ApprovalCenterError';
  readonly code: ApprovalCenterErrorCode;
  /** The message without its `[@x/approval-center]` origin: what a person is shown. */
  readonly reason: string;
  /** For `rate_limited`: seconds until the next try is looked at. */
  readonly retryAfter: number | undefined;
  /** More fields of the API's `{ "error": { ... } }` (`limit` of a body too large, ...). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: ApprovalCenterErrorCode,
    reason: string,
    options: { cause?: unknown; retryAfter?: number; details?: Record<string, unknown> } = {},
  ) {
    super(
      `[@x/approval-center] ${reason}`,
      options.cause === undefined ? {} : { cause: options.cause },
    );
    this.code = code;
    this.reason = reason;
    this.retryAfter = options.retryAfter;
    this.details = options.details;
  }

  /** The HTTP status this error answers with. */
  get status(): number {
    return HTTP_STATUS_OF[this.code];
  }

  /** True for an `ApprovalCenterError`, also one thrown by another installed copy of this package. */
  static is(error: unknown): error is ApprovalCenterError {
    return typeof error === 'object' && error !== null && marker in error;
  }

  /** True when `error` is an `ApprovalCenterError` with that `code`. */
  static hasCode(error: unknown, code: ApprovalCenterErrorCode): error is ApprovalCenterError {
    return ApprovalCenterError.is(error) && error.code === code;
  }
}
