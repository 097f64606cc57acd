import { openStockTarget, type StockTarget, serverForTests } from '@internal/pg-test';
import { SessionError } from '@x/session';
import { sampleCheckpoint } from '@x/session/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, PostgresCheckpointStore } from './index.js';

const server = await serverForTests();

// Stock postgres.js, as users install it: the repository's patch never reaches them.
describe.skipIf(server === undefined)('PostgresCheckpointStore over stock postgres.js', () => {
  let stock: StockTarget;
  let store: PostgresCheckpointStore;
  beforeAll(async () => {
    stock = await openStockTarget(server ?? '');
    await migrate(stock.db);
    store = new PostgresCheckpointStore(stock.db);
  });
  afterAll(() => stock?.close());

  it('get and list after a dropped connection succeed; a put in doubt is unavailable and get tells', async () => {
    const revision = await store.put('t-1', sampleCheckpoint(1));
    await stock.dropConnection();
    expect((await store.get('t-1'))?.revision).toBe(revision);
    await stock.dropConnection();
    expect(await store.list()).toEqual([{ threadId: 't-1', revision }]);

    await stock.dropConnection();
    const put = store.put('t-1', sampleCheckpoint(2), { expectedRevision: revision });
    const outcome = await put.catch((e: unknown) => e);
    // The driver reports the dead connection's error on this UPDATE: it may or may not have
    // run, so it is unavailable, and get tells which before a retry.
    if (typeof outcome !== 'number') {
      expect(SessionError.hasCode(outcome, 'unavailable')).toBe(true);
      const stored = await store.get('t-1');
      if (stored?.revision === revision) {
        await store.put('t-1', sampleCheckpoint(2), { expectedRevision: revision });
      }
    }
    expect((await store.get('t-1'))?.checkpoint).toEqual(sampleCheckpoint(2));
    const stale = store.put('t-1', sampleCheckpoint(3), { expectedRevision: revision });
    expect(SessionError.hasCode(await stale.catch((e: unknown) => e), 'conflict')).toBe(true);
  });
});
