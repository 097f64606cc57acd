const marker = Symbol.for('@x/mcp.McpElicitationError');

/** What went wrong, as a stable string to branch on. */
export type McpElicitationErrorCode =
  /** An `accept` answer whose content does not match the schema the server requested. */
  | 'invalid_content'
  /** An answer that is not `accept` with content, `decline` or `cancel`. */
  | 'invalid_answer'
  /** The token names a pause that is not an MCP elicitation (or whose record is damaged). */
  | 'not_elicitation'
  /** `resume` was called on a client that is not connected. */
  | 'not_connected';

/**
 * The one error `@x/mcp` throws. Branch on `code` (or `McpElicitationError.is(err)`),
 * never on the message text. `@x/askuser`'s errors (an unknown or already answered token:
 * `AskUserError`) pass through unchanged.
 *
 * @example
 * try {
 *   await answerElicitation(store, token, { action: 'accept', content: { guests: 'four' } });
 * } catch (err) {
 *   if (McpElicitationError.is(err) && err.code === 'invalid_content') console.error(err.message);
 *   else throw err;
 * }
 */
export class McpElicitationError extends Error {
  readonly [marker] = true;
  override readonly name = 'McpElicitationError';
  readonly code: McpElicitationErrorCode;
  /** The pause the error is about, when known. */
  readonly token: string | undefined;

  constructor(
    code: McpElicitationErrorCode,
    message: string,
    options: { token?: string; cause?: unknown } = {},
  ) {
    super(`[@x/mcp] ${message}`, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.token = options.token;
  }

  /** True for a `McpElicitationError`, also one thrown by another installed copy of this package. */
  static is(error: unknown): error is McpElicitationError {
    return typeof error === 'object' && error !== null && marker in error;
  }

  /** True when `error` is a `McpElicitationError` with that `code`. */
  static hasCode(error: unknown, code: McpElicitationErrorCode): error is McpElicitationError {
    return McpElicitationError.is(error) && error.code === code;
  }
}
