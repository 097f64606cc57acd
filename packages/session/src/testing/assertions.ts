import { SessionError, type SessionErrorCode } from '../errors.js';

/** The `code` a promise rejects with, or `'ok'`; anything but a SessionError is rethrown. */
export async function codeOf(promise: Promise<unknown>): Promise<SessionErrorCode | 'ok'> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (SessionError.is(error)) return error.code;
    throw error;
  }
}
