// Internal: the one walk that decides what a JSON value is, used by the schema, isJsonValue
// and the converters, so every entry point refuses the same values for the same reason.

/**
 * How many arrays and objects deep a JSON value (a tool input, a payload, a result) may be
 * nested: `[]` is 1 deep, `{"a":[1]}` is 2. Deeper values are refused everywhere with the
 * same message, checked by counting rather than by waiting for the stack to overflow (which
 * would happen at a depth that depends on the stack size).
 */
export const MAX_JSON_DEPTH = 256;

/** Where a value stops being JSON, and why. */
export interface NonJson {
  path: Array<string | number>;
  reason: string;
}

// Returns the first place where `value` is not a JSON value, or undefined when it is one.
// A path (not just a boolean) so an error can name the field, e.g. `input.when.day`. The
// path is built on the way back up, only on failure: checking a valid value allocates
// nothing per node, which matters for transcripts with thousands of tool inputs.
// `ancestors` holds the objects being walked (a repeat among them is a cycle; a value
// shared by two branches is fine).
export function findNonJson(value: unknown, ancestors: object[] = []): NonJson | undefined {
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
      if (ancestors.length >= MAX_JSON_DEPTH) {
        return {
          path: [],
          reason: `it is nested deeper than ${MAX_JSON_DEPTH} arrays and objects`,
        };
      }
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
        // `for...in` with an own-key check, not `Object.keys`: no array per object.
        for (const key in value) {
          if (!Object.hasOwn(value, key)) continue;
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
