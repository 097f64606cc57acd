import { describe, expect, it } from 'vitest';
import {
  AskUserStoreError,
  DuplicatePauseError,
  InvalidAnswerError,
  InvalidPauseError,
  PauseNotFoundError,
} from './index.js';

const cases = [
  [
    'PauseNotFoundError',
    () => new PauseNotFoundError(['t']),
    'pause_not_found',
    PauseNotFoundError,
  ],
  [
    'InvalidAnswerError',
    () => new InvalidAnswerError('bad', 't'),
    'invalid_answer',
    InvalidAnswerError,
  ],
  ['InvalidPauseError', () => new InvalidPauseError('bad'), 'invalid_pause', InvalidPauseError],
  [
    'DuplicatePauseError',
    () => new DuplicatePauseError('t'),
    'duplicate_pause',
    DuplicatePauseError,
  ],
  ['AskUserStoreError', () => new AskUserStoreError('40P01', 'x'), '40P01', AskUserStoreError],
] as const;

describe('errors', () => {
  it.each(cases)('%s has a stable name, code and [@x/askuser] message', (name, make, code) => {
    const error = make();
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(error.message.startsWith('[@x/askuser] ')).toBe(true);
  });

  it('guards recognise only their own class', () => {
    for (const [, make, , Own] of cases) {
      for (const [, , , Other] of cases) {
        expect(Other.is(make())).toBe(Other === Own);
      }
    }
    expect(PauseNotFoundError.is(new Error('x'))).toBe(false);
    expect(PauseNotFoundError.is(null)).toBe(false);
    expect(PauseNotFoundError.is('pause_not_found')).toBe(false);
  });

  it('guards recognise an error from another copy of the package (same global symbol)', () => {
    const foreign = {
      [Symbol.for('@x/askuser.PauseNotFoundError')]: true,
      name: 'PauseNotFoundError',
      code: 'pause_not_found',
    };
    expect(PauseNotFoundError.is(foreign)).toBe(true);
    expect(foreign instanceof PauseNotFoundError).toBe(false);
  });

  it('keeps the cause', () => {
    const cause = new Error('driver');
    expect(new DuplicatePauseError('t', cause).cause).toBe(cause);
    expect(new AskUserStoreError('57P01', 'x', cause).cause).toBe(cause);
  });
});
