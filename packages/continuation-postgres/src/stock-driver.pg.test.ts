import { openStockTarget, type StockTarget, serverForTests } from '@internal/pg-test';
import { ContinuationError } from '@x/continuation';
import { sampleSuspension } from '@x/continuation/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, PostgresContinuationStore } from './index.js';

const server = await serverForTests();

// Stock postgres.js, as users install it: the repository's patch never reaches them.
describe.skipIf(server === undefined)('PostgresContinuationStore over stock postgres.js', () => {
  let stock: StockTarget;
  let store: PostgresContinuationStore;
  beforeAll(async () => {
    stock = await openStockTarget(server ?? '');
    await migrate(stock.db);
    store = new PostgresContinuationStore(stock.db);
  });
  afterAll(() => stock?.close());

  it('a load after a dropped connection succeeds; a mark in doubt is unavailable and settles on retry', async () => {
    const s = sampleSuspension({ messages: true });
    await store.save(s);
    await stock.dropConnection();
    expect(await store.load(s.interactionId)).toEqual(s);

    await stock.dropConnection();
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
