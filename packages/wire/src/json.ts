import { z } from 'zod';

/** Any value that survives `JSON.stringify` → `JSON.parse` unchanged. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** True when `value` is a plain JSON value (finite numbers, plain objects, no cycles). */
export function isJsonValue(value: unknown, seen: Set<object> = new Set()): value is JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (seen.has(value)) return false;
      seen.add(value);
      const ok = Array.isArray(value)
        ? value.every((item) => isJsonValue(item, seen))
        : isPlainObject(value) && Object.values(value).every((item) => isJsonValue(item, seen));
      seen.delete(value);
      return ok;
    }
    default:
      return false;
  }
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// A hand-written check rather than a recursive zod union: tool inputs can be large and
// this keeps parsing a transcript close to the cost of JSON.parse.
/** Schema of {@link JsonValue}. */
export const JsonValueSchema: z.ZodType<JsonValue> = z.custom<JsonValue>(
  (value) => isJsonValue(value),
  {
    message: 'expected a JSON value',
  },
);
