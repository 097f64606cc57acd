// Internal: how a failure that no check named still leaves this package as a SessionError.
import { SessionError } from './errors.js';

/** A short, safe description of any value for an error message (never throws). */
export function describeValue(value: unknown): string {
  try {
    if (typeof value === 'string') return JSON.stringify(value);
    if (value === null) return 'null';
    if (Array.isArray(value)) return 'an array';
    return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
  } catch {
    return 'an unreadable value';
  }
}

/**
 * Runs `read`; anything it throws that is not a SessionError (a throwing getter, a revoked
 * proxy, a value of a type no check expected) leaves as `invalid`, as every failure of this
 * package does. The original error is the `cause`.
 */
export function guard<T>(what: string, read: () => T): T {
  try {
    return read();
  } catch (cause) {
    if (SessionError.is(cause)) throw cause;
    let reason: string;
    try {
      reason = String(cause);
    } catch {
      reason = 'an unreadable error';
    }
    throw new SessionError('invalid', `${what} could not be read (${reason}): pass plain data`, {
      cause,
    });
  }
}

/** `options[key]` of an optional options object (absent or `null`: `undefined`). */
export function optionOf(options: unknown, key: string, what: string): unknown {
  return guard(what, () => {
    if (options === undefined || options === null) return undefined;
    if (typeof options !== 'object') {
      throw new SessionError(
        'invalid',
        `${what}: expected an options object, received ${describeValue(options)}`,
      );
    }
    return (options as Record<string, unknown>)[key];
  });
}
