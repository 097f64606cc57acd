import { openServerTarget, type SqlTarget, serverForTests } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pause, query, truncate, waitForLockWaiters } from '../test/support.js';
import { AskUserError, AskUserStore, migrate } from './index.js';

const serverUrl = await serverForTests();

describe.skipIf(serverUrl === undefined)('concurrent resolution on the server', () => {
  let target: SqlTarget;
  let store: AskUserStore;
  const clients: postgres.Sql[] = [];

  /** A store on a connection of its own, as another process would have. */
  async function otherProcess(): Promise<{ store: AskUserStore; client: postgres.Sql }> {
    const client = postgres(target.url ?? '', { max: 1, onnotice: () => {} });
    clients.push(client);
    await client`select 1`;
    return { store: new AskUserStore(drizzle({ client })), client };
  }

  /** Holds a row lock on `token` in an open transaction until `release` is called. */
  async function holdRowLock(token: string): Promise<{ release: () => Promise<void> }> {
    const { client } = await otherProcess();
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const done = client.begin(async (tx) => {
      await tx`select token from aura.paused_states where token = ${token} for update`;
      locked();
      await released;
    });
    await isLocked;
    return {
      release: async () => {
        release();
        await done;
      },
    };
  }

  async function pending(): Promise<string[]> {
    return (await store.listPendingAll(1000)).map((p) => p.token).sort();
  }

  beforeAll(async () => {
    target = await openServerTarget(serverUrl ?? '');
    await migrate(target.db);
    store = new AskUserStore(target.db);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end({ timeout: 5 })));
    await target?.close();
  });
  beforeEach(() => truncate(target.db));

  it('10 connections answer one token at once: exactly one succeeds, nine get not_found', async () => {
    await store.insert(pause('race'));
    const racers = await Promise.all(Array.from({ length: 10 }, () => otherProcess()));
    // All ten queue behind one lock, so they truly overlap when it is released.
    const lock = await holdRowLock('race');
    const results = Promise.allSettled(
      racers.map(({ store: s }, i) =>
        s.markResumed('race', { action: 'accept', content: `r${i}` }),
      ),
    );
    await waitForLockWaiters(target.db, 10);
    await lock.release();
    const settled = await results;
    const winners = settled.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    const losers = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(9);
    expect(losers.every((e) => AskUserError.hasCode(e, 'not_found'))).toBe(true);
    expect((await store.getAnswer('race'))?.answer.content).toBe(`r${winners[0]}`);
  });

  it('two overlapping batches: each token is resolved once and one batch fails whole', async () => {
    for (const t of ['o1', 'o2', 'o3', 'o4', 'o5']) await store.insert(pause(t));
    const [a, b] = await Promise.all([otherProcess(), otherProcess()]);
    const lock = await holdRowLock('o3');
    const batchA = a!.store.markResumedBatch({
      o1: { action: 'accept', content: 'A' },
      o2: { action: 'accept', content: 'A' },
      o3: { action: 'accept', content: 'A' },
    });
    const batchB = b!.store.markResumedBatch({
      o3: { action: 'decline', content: 'B' },
      o4: { action: 'decline', content: 'B' },
      o5: { action: 'decline', content: 'B' },
    });
    const settled = Promise.allSettled([batchA, batchB]);
    await waitForLockWaiters(target.db, 2);
    await lock.release();
    const [ra, rb] = await settled;
    const outcomes = [ra!.status, rb!.status].sort();
    expect(outcomes).toEqual(['fulfilled', 'rejected']);
    const loser = ra!.status === 'rejected' ? ra!.reason : (rb as PromiseRejectedResult).reason;
    expect(AskUserError.hasCode(loser, 'not_found')).toBe(true);
    expect(loser.tokens).toEqual(['o3']);
    const winner = ra!.status === 'fulfilled' ? 'A' : 'B';
    const answered = await store.listAnswered();
    expect(answered.map((x) => [x.token, x.answer.content])).toEqual(
      (winner === 'A' ? ['o1', 'o2', 'o3'] : ['o3', 'o4', 'o5']).map((t) => [t, winner]),
    );
    expect(await pending()).toEqual(winner === 'A' ? ['o4', 'o5'] : ['o1', 'o2']);
  });

  it('batches over the same tokens in opposite orders never deadlock: one wins, one fails whole', async () => {
    const [a, b] = await Promise.all([otherProcess(), otherProcess()]);
    for (let round = 0; round < 10; round++) {
      await truncate(target.db);
      const tokens = Array.from({ length: 30 }, (_, i) => `d${String(i).padStart(2, '0')}`);
      for (const t of tokens) await store.insert(pause(t));
      const answer = { action: 'accept', content: '' } as const;
      const settled = await Promise.allSettled([
        a!.store.markResumedBatch(tokens.map((token) => ({ token, answer }))),
        b!.store.markResumedBatch([...tokens].reverse().map((token) => ({ token, answer }))),
      ]);
      const rejected = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
      expect(rejected).toHaveLength(1);
      expect(AskUserError.hasCode(rejected[0], 'not_found')).toBe(true);
      expect(await pending()).toEqual([]);
    }
  });

  it('a connection terminated mid-batch leaves nothing resolved', async () => {
    const tokens = Array.from({ length: 10 }, (_, i) => `m${i}`);
    for (const t of tokens) await store.insert(pause(t));
    const batcher = await otherProcess();
    // Rows lock in token order: the batch holds m0..m8 and waits for m9.
    const lock = await holdRowLock('m9');
    const batch = batcher.store
      .markResumedBatch(
        Object.fromEntries(tokens.map((t) => [t, { action: 'accept', content: 'x' }])),
      )
      .catch((e: unknown) => e);
    const [pid] = await waitForLockWaiters(target.db, 1);
    const [waiting] = await query(
      target.db,
      sql`select query from pg_stat_activity where pid = ${pid}`,
    );
    expect(String(waiting?.query)).toContain('jsonb_to_recordset');
    await target.db.execute(sql`select pg_terminate_backend(${pid})`);
    const error = await batch;
    expect(AskUserError.hasCode(error, 'unavailable')).toBe(true);
    await lock.release();
    expect(await pending()).toEqual(tokens);
    const answers = await query(
      target.db,
      sql`select count(*)::int as n from aura.paused_states where resumed_answer is not null or resumed_at is not null`,
    );
    expect(answers).toEqual([{ n: 0 }]);
  });
});
