// Internal helpers shared by the converters; not exported from the package.
import type { ImageMediaType, ImageSource, ToolResultBlock, UserBlock } from './blocks.js';
import { formatPath, WireError, type WireErrorCode } from './errors.js';
import type { JsonValue } from './json.js';
import { findNonJson } from './json-check.js';
import { IMAGE_MEDIA_TYPES_TEXT, isImageMediaType, sniffImageType } from './media-types.js';
import { checkTranscript, type Message } from './message.js';

export type Path = Array<string | number>;

/** Throws a WireError whose message names `messages[..]...` of the converter's input. */
export function fail(code: WireErrorCode, path: Path, message: string, cause?: unknown): never {
  throw new WireError(code, `${formatPath('messages', path)}: ${message}`, { path, cause });
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  try {
    if (Array.isArray(value)) return 'an array';
  } catch {
    return 'a revoked proxy';
  }
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Reads `value[key]` without letting a throwing getter escape as a bare error. */
export function field(value: object, key: string, path: Path): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch (cause) {
    fail('invalid', [...path, key], `could not be read (${String(cause)})`, cause);
  }
}

/** Array.isArray, which throws on a revoked proxy, as a WireError. */
function isArray(value: unknown, path: Path): value is readonly unknown[] {
  try {
    return Array.isArray(value);
  } catch (cause) {
    return fail('invalid', path, `could not be read (${String(cause)})`, cause);
  }
}

export function expectObject(value: unknown, path: Path): object {
  if (typeof value !== 'object' || value === null || isArray(value, path)) {
    fail('invalid', path, `expected an object, received ${describe(value)}`);
  }
  return value;
}

export function expectArray(value: unknown, path: Path): readonly unknown[] {
  if (!isArray(value, path))
    fail('invalid', path, `expected an array, received ${describe(value)}`);
  return value;
}

/**
 * Runs a converter. Its checks name every failure they expect; anything else (a proxy or a
 * getter that misbehaves where no check looked) still leaves as a WireError, as the package
 * promises for any input.
 */
export function converting<T>(convert: () => T): T {
  try {
    return convert();
  } catch (cause) {
    if (WireError.is(cause)) throw cause;
    throw new WireError('invalid', `messages: could not be converted (${String(cause)})`, {
      cause,
    });
  }
}

export function expectString(
  value: unknown,
  path: Path,
  options: { nonEmpty?: boolean } = {},
): string {
  if (typeof value !== 'string')
    fail('invalid', path, `expected a string, received ${describe(value)}`);
  if (options.nonEmpty && value === '') fail('invalid', path, 'expected a non-empty string');
  return value;
}

/** `value` when it is a JSON value (see {@link findNonJson}); else `invalid` naming where and why. */
export function expectJson(value: unknown, path: Path): JsonValue {
  let bad: ReturnType<typeof findNonJson>;
  try {
    bad = findNonJson(value);
  } catch (cause) {
    return fail('invalid', path, `could not be read (${String(cause)})`, cause);
  }
  if (bad) fail('invalid', [...path, ...bad.path], `expected a JSON value: ${bad.reason}`);
  return value as JsonValue;
}

/** `data:image/png;base64,AAAA` → its parts, for the four image types; undefined for anything else. */
export function splitBase64DataUrl(
  url: string,
): { mediaType: ImageMediaType; data: string } | undefined {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (!match || match[2] === undefined || !isImageMediaType(match[1])) return undefined;
  return { mediaType: match[1], data: match[2] };
}

/** The image source a URL stands for: a base64 data URL of one of the four types becomes a `base64` source. */
export function imageSourceFromUrl(url: string): ImageSource {
  const inline = splitBase64DataUrl(url);
  return inline
    ? { type: 'base64', media_type: inline.mediaType, data: inline.data }
    : { type: 'url', url };
}

/**
 * The media type of an image read from another format: a declared type among the four is
 * kept; none, or the AI SDK's wildcard `image/*`, is read from the bytes. Anything else
 * (`image/svg+xml`, `IMAGE/PNG`, `image/png;name=a.png`) is refused rather than silently
 * replaced, so an accepted image never changes type on the way in.
 */
export function imageMediaType(declared: unknown, base64: string, path: Path): ImageMediaType {
  if (isImageMediaType(declared)) return declared;
  if (declared === undefined || declared === null || declared === 'image/*') {
    const sniffed = sniffImageType(base64);
    if (sniffed) return sniffed;
    fail(
      'unsupported',
      path,
      `the image type is not given and not recognisable from its bytes; give a mediaType among ${IMAGE_MEDIA_TYPES_TEXT}`,
    );
  }
  return fail(
    'unsupported',
    path,
    `image type ${JSON.stringify(declared) ?? describe(declared)} is not one a @x/wire image can hold; convert the image to one of ${IMAGE_MEDIA_TYPES_TEXT}`,
  );
}

/** A user message's content with its tool results first, the rest after, each in order. */
export function splitToolResults(content: readonly UserBlock[]): {
  results: ToolResultBlock[];
  rest: Array<Exclude<UserBlock, ToolResultBlock>>;
  indexes: { results: number[]; rest: number[] };
} {
  const results: ToolResultBlock[] = [];
  const rest: Array<Exclude<UserBlock, ToolResultBlock>> = [];
  const indexes = { results: [] as number[], rest: [] as number[] };
  content.forEach((block, index) => {
    if (block.type === 'tool_result') {
      results.push(block);
      indexes.results.push(index);
    } else {
      rest.push(block);
      indexes.rest.push(index);
    }
  });
  return { results, rest, indexes };
}

/**
 * Runs checkTranscript on a converter's output. Its path counts converted messages, not
 * the caller's input, so the message says so.
 */
export function checkConverted(messages: readonly Message[]): void {
  try {
    checkTranscript(messages);
  } catch (error) {
    if (!WireError.is(error)) throw error;
    throw new WireError(
      error.code,
      `${error.message.replace(/^\[@x\/wire\] /, '')} (path in the converted transcript)`,
      {
        path: error.path,
        cause: error,
      },
    );
  }
}
