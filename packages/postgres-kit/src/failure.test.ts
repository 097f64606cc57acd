import { describe, expect, it } from 'vitest';
import { failureReason, sqlStateOf } from './index.js';

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
