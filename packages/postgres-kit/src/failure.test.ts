import { describe, expect, it } from 'vitest';
import {
  failureReason,
  isRefusedValue,
  refusedValueReason,
  sqlStateOf,
  unstorableText,
} from './index.js';

describe('sqlStateOf', () => {
  it('reads the SQLSTATE through drizzle’s wrapper (cause.code), never from the message', () => {
    const driver = Object.assign(new Error('whatever the text'), { code: '40001' });
    const wrapped = Object.assign(new Error('Failed query: ...'), { cause: driver });
    expect(sqlStateOf(wrapped)).toBe('40001');
    expect(sqlStateOf(driver)).toBe('40001');
    expect(sqlStateOf(new Error('serialization failure 40001'))).toBeUndefined();
    expect(sqlStateOf(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBeUndefined();
    expect(sqlStateOf(null)).toBeUndefined();
  });
});

describe('failureReason', () => {
  it('says to migrate for a missing table or schema, names the connection or the SQLSTATE otherwise', () => {
    const missing = 'the x tables are missing';
    expect(failureReason({ code: '42P01' }, missing)).toBe(
      'the x tables are missing; run migrate(db) first',
    );
    expect(failureReason({ code: '3F000' }, missing)).toContain('run migrate(db) first');
    const pglite = new Error('Failed query: select 1', {
      cause: new Error("ENOENT: no such file or directory, mkdir './data/pglite'"),
    });
    expect(failureReason(pglite, missing)).toBe(
      "the database could not be reached (ENOENT: no such file or directory, mkdir './data/pglite'); check that it runs and that its address or data folder exists",
    );
    expect(failureReason({ code: '57P01' }, missing)).toBe('SQLSTATE 57P01');
  });
});

describe('refused values (SQLSTATE class 22)', () => {
  it('are the caller’s input, never an outage, and say the server’s words', () => {
    const nul = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
      code: '22021',
    });
    const wrapped = new Error('Failed query: insert ...', { cause: nul });
    expect(isRefusedValue(wrapped)).toBe(true);
    expect(isRefusedValue({ code: '22P05' })).toBe(true);
    expect(isRefusedValue({ code: '57P01' })).toBe(false);
    expect(isRefusedValue(new Error('no code'))).toBe(false);
    expect(refusedValueReason(wrapped)).toBe(
      'the database refused a value it was given (SQLSTATE 22021: invalid byte sequence for encoding "UTF8": 0x00)',
    );
  });
});

describe('unstorableText', () => {
  it('names a NUL or a lone surrogate, and passes every well-formed text', () => {
    expect(unstorableText('a\u0000b')).toBe('a NUL character (U+0000)');
    expect(unstorableText('\ud800x')).toBe('a lone surrogate (U+D800, half of a UTF-16 pair)');
    expect(unstorableText('x\udc00')).toBe('a lone surrogate (U+DC00, half of a UTF-16 pair)');
    expect(unstorableText('ab\ud83d')).toBe('a lone surrogate (U+D83D, half of a UTF-16 pair)');
    for (const fine of ['', 'Lisbon', 'emoji 😀 pair', '\ud83d\ude00', 'ÿ\u00ff\ufffd']) {
      expect(unstorableText(fine), fine).toBeUndefined();
    }
  });
});
