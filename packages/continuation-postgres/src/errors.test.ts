import { ContinuationError } from '@x/continuation';
import { describe, expect, it } from 'vitest';
import { wrapDatabaseError } from './errors.js';

describe('wrapDatabaseError', () => {
  it('a value the database refused (SQLSTATE class 22) is invalid, never unavailable', () => {
    const driver = Object.assign(new Error('unsupported Unicode escape sequence'), {
      code: '22P05',
    });
    const error = wrapDatabaseError(new Error('Failed query', { cause: driver }), 'save', 'i-1');
    expect(ContinuationError.is(error) && error.code).toBe('invalid');
    expect(error.sqlState).toBe('22P05');
    expect(error.interactionId).toBe('i-1');
    expect(error.message).toContain(
      'save refused: the database refused a value it was given (SQLSTATE 22P05: unsupported Unicode escape sequence)',
    );
  });

  it('any other database failure is unavailable, with its SQLSTATE', () => {
    const error = wrapDatabaseError(Object.assign(new Error('x'), { code: '57P01' }), 'save');
    expect(ContinuationError.is(error) && error.code).toBe('unavailable');
    expect(error.sqlState).toBe('57P01');
  });
});
