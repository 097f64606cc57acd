import { z } from 'zod';
import { findNonJson, type NonJson } from './json-check.js';

export { MAX_JSON_DEPTH } from './json-check.js';

/**
 * Any value that survives `JSON.stringify` → `JSON.parse` unchanged (a `-0` comes back as
 * `0`: JSON has no negative zero). At run time it is also nested at most
 * {@link MAX_JSON_DEPTH} arrays and objects deep.
 */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/**
 * True when `value` is a plain JSON value (finite numbers, plain objects, no cycles, no holes)
 * nested at most {@link MAX_JSON_DEPTH} arrays and objects deep.
 */
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
