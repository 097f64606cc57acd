import { describe, expect, it } from 'vitest';
import { AskUserError, type AskUserErrorCode } from './index.js';

describe('AskUserError', () => {
  it('has a stable name, the code, the tokens, the SQLSTATE apart, and an [@x/askuser] message', () => {
    const cause = new Error('driver');
    const error = new AskUserError('unavailable', 'insert failed', {
      tokens: ['t'],
      sqlState: '57P01',
      cause,
    });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('AskUserError');
    expect(error.code).toBe('unavailable');
    expect(error.tokens).toEqual(['t']);
    expect(error.sqlState).toBe('57P01');
    expect(error.cause).toBe(cause);
    expect(error.message.startsWith('[@x/askuser] ')).toBe(true);
    expect(new AskUserError('not_found', 'x').tokens).toEqual([]);
  });

  it('the guards tell codes apart and refuse other values', () => {
    const codes: AskUserErrorCode[] = [
      'not_found',
      'invalid_answer',
      'invalid_pause',
      'invalid_argument',
      'forbidden',
      'duplicate',
      'unavailable',
      'corrupt',
    ];
    for (const code of codes) {
      const error = new AskUserError(code, 'x');
      expect(AskUserError.is(error)).toBe(true);
      for (const other of codes) expect(AskUserError.hasCode(error, other)).toBe(other === code);
    }
    expect(AskUserError.is(new Error('x'))).toBe(false);
    expect(AskUserError.is(null)).toBe(false);
    expect(AskUserError.is('not_found')).toBe(false);
  });

  it('the guard recognises an error from another copy of the package (same global symbol)', () => {
    const foreign = {
      [Symbol.for('@x/askuser.AskUserError')]: true,
      name: 'AskUserError',
      code: 'not_found',
    };
    expect(AskUserError.hasCode(foreign, 'not_found')).toBe(true);
    expect(foreign instanceof AskUserError).toBe(false);
  });
});
