import { SessionError } from '@x/session';
import { sampleCheckpoint } from '@x/session/testing';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { wrapDatabaseError } from './errors.js';
import { PostgresCheckpointStore } from './index.js';

describe('database errors', () => {
  it('an unreachable database is unavailable, with the driver error as cause, and nothing else thrown', async () => {
    const client = postgres('postgres://postgres@127.0.0.1:1/none', { connect_timeout: 2, max: 1 });
    const store = new PostgresCheckpointStore(
      drizzle({ client }) as unknown as PgDatabase<PgQueryResultHKT>,
    );
    try {
      for (const call of [
        () => store.get('t'),
        () => store.put('t', sampleCheckpoint(1)),
        () => store.list(),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(SessionError.hasCode(error, 'unavailable')).toBe(true);
        expect((error as Error).cause).toBeDefined();
        expect((error as Error).message).toMatch(/^\[@x\/session\] /);
      }
    } finally {
      await client.end({ timeout: 1 });
    }
  });

  it('unsafe ids and invalid checkpoints are refused before any database call', async () => {
    const client = postgres('postgres://postgres@127.0.0.1:1/none', { connect_timeout: 2, max: 1 });
    const store = new PostgresCheckpointStore(
      drizzle({ client }) as unknown as PgDatabase<PgQueryResultHKT>,
    );
    try {
      await expect(store.get('../x')).rejects.toMatchObject({ code: 'unsafe_id' });
      await expect(store.put('t', { version: 9 } as never)).rejects.toMatchObject({
        code: 'unsupported_version',
      });
    } finally {
      await client.end({ timeout: 1 });
    }
  });
});

describe('a value the database refused (SQLSTATE class 22)', () => {
  it('is invalid, the caller’s input, never unavailable; the SQLSTATE and the server’s words kept', () => {
    const driver = Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
      code: '22021',
    });
    const error = wrapDatabaseError(new Error('Failed query', { cause: driver }), 'put', 't');
    expect(SessionError.hasCode(error, 'invalid')).toBe(true);
    expect(error.details).toMatchObject({ threadId: 't', sqlState: '22021' });
    expect(error.message).toContain(
      'put refused: the database refused a value it was given (SQLSTATE 22021: invalid byte sequence',
    );
    // Any other failure stays unavailable.
    const down = wrapDatabaseError(Object.assign(new Error('x'), { code: '57P01' }), 'put');
    expect(SessionError.hasCode(down, 'unavailable')).toBe(true);
  });
});
