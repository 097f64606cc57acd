import {
  createTestDatabase,
  dropConnection,
  loadStockPostgres,
  serverForTests,
} from '@internal/pg-test';
import { ContinuationError } from '@x/continuation';
import { sampleSuspension } from '@x/continuation/testing';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, PostgresContinuationStore } from './index.js';

const server = await serverForTests();

// Stock postgres.js, as users install it: the repository's patch never reaches them.
describe.skipIf(server === undefined)('PostgresContinuationStore over stock postgres.js', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: postgres.Sql;
  let client: postgres.Sql;
  let store: PostgresContinuationStore;
  beforeAll(async () => {
    database = await createTestDatabase(server);
    admin = postgres(database.url, { max: 1, onnotice: () => {} });
    client = (await loadStockPostgres())(database.url, { max: 1, onnotice: () => {} });
    const db = drizzle({ client });
    await migrate(db);
    store = new PostgresContinuationStore(db);
  });
  afterAll(async () => {
    await client?.end({ timeout: 1 });
    await admin?.end({ timeout: 1 });
    await database?.drop();
  });

  it('a load after a dropped connection succeeds; a mark in doubt is unavailable and settles on retry', async () => {
    const s = sampleSuspension({ messages: true });
    await store.save(s);
    await dropConnection(client, admin);
    expect(await store.load(s.interactionId)).toEqual(s);

    await dropConnection(client, admin);
    const first = await store.markResolved(s.interactionId).catch((e: unknown) => e);
    // The driver reports the dead connection's error on this UPDATE: it may or may not have
    // run, so it is unavailable, and a retry settles it.
    const again = await store.markResolved(s.interactionId).catch((e: unknown) => e);
    if (first === undefined) {
      expect(ContinuationError.hasCode(again, 'already_resolved')).toBe(true);
    } else {
      expect(ContinuationError.hasCode(first, 'unavailable')).toBe(true);
      expect((first as Error).cause).toBeDefined();
      expect(again === undefined || ContinuationError.hasCode(again, 'already_resolved')).toBe(
        true,
      );
    }
    await expect(store.load(s.interactionId)).rejects.toMatchObject({ code: 'already_resolved' });
  });
});
