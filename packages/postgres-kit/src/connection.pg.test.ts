import { openStockTarget, type StockTarget, serverForTests } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isConnectionDrop, retryRead, rowsOf } from './index.js';

describe('isConnectionDrop', () => {
  it('is a dropped connection for SQLSTATE class 08 and 57P01-57P03 and the driver’s closed codes, through a wrapper', () => {
    const wrapped = (cause: object) => Object.assign(new Error('Failed query'), { cause });
    for (const code of [
      '08006',
      '08003',
      '57P01',
      '57P02',
      '57P03',
      'CONNECTION_CLOSED',
      'ECONNRESET',
    ]) {
      expect(isConnectionDrop(wrapped({ code })), code).toBe(true);
    }
    for (const code of [
      '23505',
      '40001',
      '42P01',
      'ECONNREFUSED',
      'CONNECT_TIMEOUT',
      'CONNECTION_ENDED',
    ]) {
      expect(isConnectionDrop(wrapped({ code })), code).toBe(false);
    }
    expect(isConnectionDrop(new Error('connection closed'))).toBe(false);
  });
});

const server = await serverForTests();

// Stock postgres.js, as the packages' users install it (the repository patches its own copy).
describe.skipIf(server === undefined)('retryRead with stock postgres.js 3.4.9', () => {
  let stock: StockTarget;
  beforeAll(async () => {
    stock = await openStockTarget(server ?? '');
  });
  afterAll(() => stock?.close());

  it('the first statement after a dropped connection fails with a stale 57P01 (the driver bug)', async () => {
    await stock.dropConnection();
    const error = await stock.db.execute(sql`select 1 as one`).catch((e: unknown) => e);
    expect(isConnectionDrop(error)).toBe(true);
  });

  it('a read retried by retryRead goes through', async () => {
    await stock.dropConnection();
    const rows = rowsOf(await retryRead(() => stock.db.execute(sql`select 1 as one`)));
    expect(rows).toEqual([{ one: 1 }]);
  });
});
