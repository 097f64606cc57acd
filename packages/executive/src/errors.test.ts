import { describe, expect, it } from 'vitest';
import { ExecutiveError, type ExecutiveErrorCode } from './index.js';

describe('ExecutiveError', () => {
  it('has a stable name, the code, the run, the tokens, the cause and an [@x/executive] message', () => {
    const cause = new Error('lease taken over');
    const error = new ExecutiveError('lease_lost', 'run r1 was taken over', {
      runId: 'r1',
      tokens: ['t'],
      cause,
    });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ExecutiveError');
    expect(error.code).toBe('lease_lost');
    expect(error.runId).toBe('r1');
    expect(error.tokens).toEqual(['t']);
    expect(error.cause).toBe(cause);
    expect(error.message).toBe('[@x/executive] run r1 was taken over');
    const bare = new ExecutiveError('not_found', 'x');
    expect(bare.tokens).toEqual([]);
    expect(bare.runId).toBeUndefined();
    expect('cause' in bare).toBe(false);
  });

  it('the guards tell codes apart and refuse other values', () => {
    const codes: ExecutiveErrorCode[] = [
      'usage',
      'not_found',
      'forbidden',
      'expired',
      'already_answered',
      'conflict',
      'lease_lost',
      'limit_reached',
    ];
    for (const code of codes) {
      const error = new ExecutiveError(code, 'x');
      expect(ExecutiveError.is(error)).toBe(true);
      for (const other of codes) expect(ExecutiveError.hasCode(error, other)).toBe(other === code);
    }
    expect(ExecutiveError.is(new Error('x'))).toBe(false);
    expect(ExecutiveError.is(null)).toBe(false);
    expect(ExecutiveError.is('not_found')).toBe(false);
  });

  it('the guard recognises an error from another copy of the package (same global symbol)', () => {
    const foreign = {
      [Symbol.for('@x/executive.ExecutiveError')]: true,
      name: 'ExecutiveError',
      code: 'expired',
    };
    expect(ExecutiveError.hasCode(foreign, 'expired')).toBe(true);
    expect(foreign instanceof ExecutiveError).toBe(false);
  });
});
