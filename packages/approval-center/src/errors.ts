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
  /** The identity provider did not answer. */
  | 'unavailable';

/** The HTTP status each {@link ApprovalCenterErrorCode} answers with. */
export const HTTP_STATUS_OF: Readonly<Record<ApprovalCenterErrorCode, number>> = {
  invalid_argument: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  rate_limited: 429,
  unavailable: 503,
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

  constructor(
    code: ApprovalCenterErrorCode,
    reason: string,
    options: { cause?: unknown; retryAfter?: number } = {},
  ) {
    super(
      `[@x/approval-center] ${reason}`,
      options.cause === undefined ? {} : { cause: options.cause },
    );
    this.code = code;
    this.reason = reason;
    this.retryAfter = options.retryAfter;
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
