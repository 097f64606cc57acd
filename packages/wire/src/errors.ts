const marker = Symbol.for('@x/wire.WireError');

/** What went wrong, as a stable string to branch on. */
export type WireErrorCode =
  /** The input does not match the schema; `path` names the first bad field. */
  | 'invalid'
  /** The messages are each valid but do not form a transcript (tool ids unpaired or repeated). */
  | 'invalid_transcript'
  /** A converter was asked to express something the target format cannot carry. */
  | 'unsupported';

/**
 * The one error `@x/wire` throws. Branch on `code` (or `WireError.is(err)`), never on the
 * message text. `path` is where in the input the problem is, e.g. `[3, 'content', 0, 'id']`.
 */
export class WireError extends Error {
  readonly [marker] = true;
  override readonly name = 'WireError';
  readonly code: WireErrorCode;
  readonly path: ReadonlyArray<string | number>;

  constructor(
    code: WireErrorCode,
    message: string,
    options: { path?: ReadonlyArray<string | number>; cause?: unknown } = {},
  ) {
    super(`[@x/wire] ${message}`, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.path = options.path ?? [];
  }

  /** True for a `WireError`, also one thrown by another installed copy of this package. */
  static is(error: unknown): error is WireError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}

/** Renders a path as `messages[3].content[0].id`. */
export function formatPath(root: string, path: ReadonlyArray<PropertyKey>): string {
  let out = root;
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  return out;
}
