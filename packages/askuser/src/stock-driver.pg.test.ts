import {
  createTestDatabase,
  dropConnection,
  loadStockPostgres,
  serverForTests,
} from '@internal/pg-test';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pause } from '../test/support.js';
import { AskUserError, AskUserStore, migrate } from './index.js';

const server = await serverForTests();

// Stock postgres.js, as users install it: the repository's patch never reaches them.
describe.skipIf(server === undefined)('AskUserStore over stock postgres.js', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let admin: postgres.Sql;
  let client: postgres.Sql;
  let store: AskUserStore;
  beforeAll(async () => {
    database = await createTestDatabase(server);
    admin = postgres(database.url, { max: 1, onnotice: () => {} });
    client = (await loadStockPostgres())(database.url, { max: 1, onnotice: () => {} });
    const db = drizzle({ client });
    await migrate(db);
    store = new AskUserStore(db);
  });
  afterAll(async () => {
    await client?.end({ timeout: 1 });
    await admin?.end({ timeout: 1 });
    await database?.drop();
  });

  it('listings after a dropped connection succeed; an answer in doubt is unavailable and getAnswer tells', async () => {
    await store.insert(pause('p-1'));
    await dropConnection(client, admin);
    expect((await store.listPendingAll()).map((p) => p.token)).toEqual(['p-1']);

    await dropConnection(client, admin);
    const answer = { action: 'accept', content: 'yes' } as const;
    const first = await store.markResumed('p-1', answer).catch((e: unknown) => e);
    // The driver reports the dead connection's error on this UPDATE: it may or may not have
    // run, so it is unavailable, and getAnswer tells which before a retry.
    if (first !== undefined) {
      expect(AskUserError.hasCode(first, 'unavailable')).toBe(true);
      if ((await store.getAnswer('p-1')) === undefined) await store.markResumed('p-1', answer);
    }
    expect((await store.getAnswer('p-1'))?.answer).toEqual(answer);
    const again = await store.markResumed('p-1', answer).catch((e: unknown) => e);
    expect(AskUserError.hasCode(again, 'not_found')).toBe(true);
  });
});
