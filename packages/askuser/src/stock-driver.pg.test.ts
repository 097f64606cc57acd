import { openStockTarget, type StockTarget, serverForTests } from '@internal/pg-test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pause } from '../test/support.js';
import { AskUserError, AskUserStore, migrate } from './index.js';

const server = await serverForTests();

// Stock postgres.js, as users install it: the repository's patch never reaches them.
describe.skipIf(server === undefined)('AskUserStore over stock postgres.js', () => {
  let stock: StockTarget;
  let store: AskUserStore;
  beforeAll(async () => {
    stock = await openStockTarget(server ?? '');
    await migrate(stock.db);
    store = new AskUserStore(stock.db);
  });
  afterAll(() => stock?.close());

  it('listings after a dropped connection succeed; an answer in doubt is unavailable and getAnswer tells', async () => {
    await store.insert(pause('p-1'));
    await stock.dropConnection();
    expect((await store.listPendingAll()).map((p) => p.token)).toEqual(['p-1']);

    await stock.dropConnection();
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
