import { z } from 'zod';

/**
 * Any value that survives `JSON.stringify` → `JSON.parse` unchanged (a `-0` comes back as
 * `0`: JSON has no negative zero).
 */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** Where a value stops being JSON, and why. */
interface NonJson {
  path: Array<string | number>;
  reason: string;
}

// Returns the first place where `value` is not a JSON value, or undefined when it is one.
// A path (not just a boolean) so an error can name the field, e.g. `input.when.day`. The
// path is built on the way back up, only on failure: checking a valid value allocates
// nothing per node, which matters for transcripts with thousands of tool inputs.
// `ancestors` holds the objects being walked (a repeat among them is a cycle; a value
// shared by two branches is fine).
function findNonJson(value: unknown, ancestors: object[]): NonJson | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value)
        ? undefined
        : { path: [], reason: `${value} is not a JSON number` };
    case 'object': {
      if (value === null) return undefined;
      if (ancestors.includes(value))
        return { path: [], reason: 'a cycle cannot be written as JSON' };
      ancestors.push(value);
      try {
        if (Array.isArray(value)) {
          // An index loop rather than `every`: a hole in a sparse array would become `null`.
          for (let i = 0; i < value.length; i++) {
            if (!(i in value)) return { path: [i], reason: 'a hole in an array is not JSON' };
            const bad = findNonJson(value[i], ancestors);
            if (bad) {
              bad.path.unshift(i);
              return bad;
            }
          }
          return undefined;
        }
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) {
          const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
          return {
            path: [],
            reason: `${typeof name === 'string' && name ? `a ${name}` : 'this object'} is not a plain JSON object`,
          };
        }
        for (const key of Object.keys(value)) {
          const bad = findNonJson((value as Record<string, unknown>)[key], ancestors);
          if (bad) {
            bad.path.unshift(key);
            return bad;
          }
        }
        return undefined;
      } finally {
        ancestors.pop();
      }
    }
    default:
      return { path: [], reason: `a ${typeof value} is not a JSON value` };
  }
}

/** True when `value` is a plain JSON value (finite numbers, plain objects, no cycles, no holes). */
export function isJsonValue(value: unknown): value is JsonValue {
  try {
    return findNonJson(value, []) === undefined;
  } catch {
    // A throwing getter or a revoked proxy is not something JSON.stringify could write either.
    return false;
  }
}

// A hand-written check rather than a recursive zod union: tool inputs can be large and
// this keeps parsing a transcript close to the cost of JSON.parse. The issue carries the
// path of the first non-JSON part, so an error names `input.when` and not just `input`.
/** Schema of {@link JsonValue}. */
export const JsonValueSchema: z.ZodType<JsonValue> = z.unknown().check((ctx) => {
  let bad: NonJson | undefined;
  try {
    bad = findNonJson(ctx.value, []);
  } catch (error) {
    bad = { path: [], reason: `reading it threw (${String(error)})` };
  }
  if (bad) {
    ctx.issues.push({
      code: 'custom',
      input: ctx.value,
      path: bad.path,
      message: `expected a JSON value: ${bad.reason}`,
    });
  }
}) as z.ZodType<JsonValue>;
