import { SessionError } from '@x/session';
import { sampleCheckpoint } from '@x/session/testing';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
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
