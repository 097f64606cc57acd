import { expect } from 'vitest';
import { ContinuationError, type ContinuationErrorCode } from '../errors.js';
import { shown } from './suite-plumbing.js';

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

/**
 * Asserts that `promise` rejects with a ContinuationError of `code` (and `field`, as a
 * prefix); a failure starts with `promised`, the promise of the contract the store broke.
 */
export async function expectCode(
  promise: Promise<unknown>,
  code: ContinuationErrorCode,
  promised: string,
  field?: string,
): Promise<ContinuationError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  const got = ContinuationError.is(err) ? `code ${err.code}` : shown(err);
  expect(
    ContinuationError.hasCode(err, code),
    `${promised}: expected a ContinuationError of code ${code}, got ${got}`,
  ).toBe(true);
  const e = err as ContinuationError;
  // A prefix: how deep the path goes into a message is @x/wire's business.
  if (field !== undefined) {
    expect(
      e.field?.startsWith(field),
      `${promised}: the ${code} error names the field ${field}, not ${e.field}`,
    ).toBe(true);
  }
  return e;
}
