import { isJsonValue } from './json.js';
import { isImageMediaType } from './media-types.js';
import type { Message } from './message.js';

// A hand-written check of the one shape `MessageSchema` hands back unchanged: content as an
// array, every block of a known type with exactly its fields. Reading a large transcript
// back (JSON.parse, then the schema) costs a second full copy of it in zod; a caller that
// owns a fresh value can keep it as is when this says yes. It only ever says yes to a
// subset of what the schema accepts, so anything else simply goes through the schema.

type Plain = Record<string, unknown>;

function isPlain(value: unknown): value is Plain {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// Index loops, `for...in` and shared constants, not `for...of`, `Object.keys` and literals: a
// transcript has tens of thousands of objects, and an array or iterator for each doubled
// what reading one back allocates.
const NO_KEYS: readonly string[] = [];
const TOOL_RESULT_KEYS: readonly string[] = ['content', 'is_error'];

/** Exactly `required` own keys plus whichever of `optional` are present. */
function hasKeys(o: Plain, required: number, optional: readonly string[] = NO_KEYS): boolean {
  let n = required;
  for (let i = 0; i < optional.length; i++) if (Object.hasOwn(o, optional[i] as string)) n++;
  let own = 0;
  for (const key in o) if (Object.hasOwn(o, key)) own++;
  return own === n;
}

const nonEmpty = (v: unknown) => typeof v === 'string' && v.length > 0;

function isText(b: Plain): boolean {
  return typeof b.text === 'string' && hasKeys(b, 2);
}

function isImage(b: Plain): boolean {
  const s = b.source;
  if (!isPlain(s) || !hasKeys(b, 2)) return false;
  if (s.type === 'url') return typeof s.url === 'string' && hasKeys(s, 2);
  return (
    s.type === 'base64' &&
    isImageMediaType(s.media_type) &&
    typeof s.data === 'string' &&
    hasKeys(s, 3)
  );
}

function isToolResult(b: Plain): boolean {
  if (!nonEmpty(b.tool_use_id) || !hasKeys(b, 2, TOOL_RESULT_KEYS)) return false;
  if (Object.hasOwn(b, 'is_error') && typeof b.is_error !== 'boolean') return false;
  if (!Object.hasOwn(b, 'content') || typeof b.content === 'string') return true;
  if (!Array.isArray(b.content)) return false;
  for (let i = 0; i < b.content.length; i++) {
    const part: unknown = b.content[i];
    if (!isPlain(part)) return false;
    if (part.type === 'text' ? !isText(part) : part.type !== 'image' || !isImage(part)) {
      return false;
    }
  }
  return true;
}

function isUserBlock(b: Plain): boolean {
  switch (b.type) {
    case 'text':
      return isText(b);
    case 'image':
      return isImage(b);
    case 'tool_result':
      return isToolResult(b);
    default:
      return false;
  }
}

function isAssistantBlock(b: Plain): boolean {
  switch (b.type) {
    case 'text':
      return isText(b);
    case 'tool_use':
      return nonEmpty(b.id) && nonEmpty(b.name) && hasKeys(b, 4) && isJsonValue(b.input);
    case 'thinking':
      return typeof b.thinking === 'string' && typeof b.signature === 'string' && hasKeys(b, 3);
    case 'redacted_thinking':
      return typeof b.data === 'string' && hasKeys(b, 2);
    default:
      return false;
  }
}

function isParsedMessage(m: unknown): boolean {
  if (!isPlain(m) || !Array.isArray(m.content) || !hasKeys(m, 2)) return false;
  const isBlock =
    m.role === 'user' ? isUserBlock : m.role === 'assistant' ? isAssistantBlock : undefined;
  if (isBlock === undefined) return false;
  for (let i = 0; i < m.content.length; i++) {
    const b: unknown = m.content[i];
    if (!isPlain(b) || !isBlock(b)) return false;
  }
  return true;
}

/**
 * True when `value` is an array of messages exactly as `MessageSchema` returns them (block
 * content as arrays, known block types with only their own fields), so that parsing it would
 * change nothing. A reader that owns a freshly parsed value (straight from `JSON.parse`) may
 * then use it without the copy the schema makes. It says no to some valid input (string
 * content, extra fields): parse that through the schema. The pairing of tool calls is not
 * checked (see {@link checkTranscript}).
 *
 * @example
 * const json = JSON.parse(text);
 * const messages = isParsedMessages(json) ? json : parseMessages(json);
 */
export function isParsedMessages(value: unknown): value is Message[] {
  try {
    if (!Array.isArray(value)) return false;
    for (let i = 0; i < value.length; i++) if (!isParsedMessage(value[i])) return false;
    return true;
  } catch {
    // A throwing getter or a revoked proxy: leave it to the schema, which reports it.
    return false;
  }
}
