import { expect } from 'vitest';
import { ContinuationError, type ContinuationErrorCode } from '../errors.js';

/** The `code` a promise rejects with, or `'ok'`; anything but a ContinuationError is rethrown. */
export async function codeOf(promise: Promise<unknown>): Promise<ContinuationErrorCode | 'ok'> {
  try {
    await promise;
    return 'ok';
  } catch (err) {
    if (ContinuationError.is(err)) return err.code;
    throw err;
  }
}

/** Asserts that `promise` rejects with a ContinuationError of `code` (and `field`, as a prefix). */
export async function expectCode(
  promise: Promise<unknown>,
  code: ContinuationErrorCode,
  field?: string,
): Promise<ContinuationError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(
    ContinuationError.is(err),
    `expected a ContinuationError(${code}), got ${String(err)}`,
  ).toBe(true);
  const e = err as ContinuationError;
  expect(e.code).toBe(code);
  // A prefix: how deep the path goes into a message is @x/wire's business.
  if (field !== undefined) expect(e.field?.startsWith(field), `field ${e.field}`).toBe(true);
  return e;
}
