const marker = Symbol.for('@x/notify.NotifyError');

/** What went wrong, as a stable string to branch on. */
export type NotifyErrorCode =
  /** An option or argument is out of range or malformed (nothing was done). */
  | 'invalid_argument'
  /** A channel did not take a notification: the receiver's status, Slack's error, no sender. */
  | 'undelivered'
  /** A decision link is malformed or not signed with the key. */
  | 'invalid_link'
  /** A decision link is past its time. */
  | 'expired_link'
  /** A decision link was used before: each answers once. */
  | 'used_link'
  /** The database failed or refused `migrate`: the server's words in the message, the original as `cause`. */
  | 'unavailable';

/** Options of {@link NotifyError}. */
export interface NotifyErrorOptions {
  /** For `undelivered`: the channel, e.g. `webhook`. */
  channel?: string;
  /** For `undelivered`: the receiver's HTTP status, when it answered. */
  status?: number;
  /** The original failure. */
  cause?: unknown;
}

/**
 * The one error `@x/notify` throws. Branch on `code` (or `NotifyError.hasCode(err, ...)`),
 * never on the message text.
 *
 * @example
 * try {
 *   const claims = readDecisionLink(key, link);
 * } catch (err) {
 *   if (NotifyError.hasCode(err, 'expired_link')) return showPage('answer on the page');
 *   throw err;
 * }
 */
export class NotifyError extends Error {
  readonly [marker] = true;
  override readonly name = 'NotifyError';
  readonly code: NotifyErrorCode;
  /** The message without its `[@x/notify]` origin: what an outbox row's `lastError` keeps. */
  readonly reason: string;
  readonly channel: string | undefined;
  readonly status: number | undefined;

  constructor(code: NotifyErrorCode, reason: string, options: NotifyErrorOptions = {}) {
    super(`[@x/notify] ${reason}`, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.reason = reason;
    this.channel = options.channel;
    this.status = options.status;
  }

  /** True for a `NotifyError`, also one thrown by another installed copy of this package. */
  static is(error: unknown): error is NotifyError {
    return typeof error === 'object' && error !== null && marker in error;
  }

  /** True when `error` is a `NotifyError` with that `code`. */
  static hasCode(error: unknown, code: NotifyErrorCode): error is NotifyError {
    return NotifyError.is(error) && error.code === code;
  }
}
