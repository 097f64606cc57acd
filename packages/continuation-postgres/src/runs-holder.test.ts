import { randomUUID } from 'node:crypto';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { ContinuationError } from '@x/continuation';
import { sampleSuspension } from '@x/continuation/testing';
import type { Message } from '@x/wire';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ContinuationDatabase,
  migrate,
  PostgresContinuationStore,
  PostgresRunQueue,
  randomHolderKey,
  takeHolderLock,
} from './index.js';
import { clearRuns, makeDue } from './testing/fixtures/run-rows.js';

const LEASE = 60_000;
const reply: Message = { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] };
const owner = () => `worker-${randomUUID()}`;

for (const t of await sqlTargets()) {
  describe.skipIf(t.skip)(`PostgresRunQueue lease holders (${t.kind})`, () => {
    let target: SqlTarget;
    let db: ContinuationDatabase;
    let queue: PostgresRunQueue;
    beforeAll(async () => {
      target = await t.open();
      db = target.db;
      await migrate(db);
      queue = new PostgresRunQueue(db);
    });
    afterAll(() => target?.close());
    beforeEach(async () => {
      await clearRuns(db);
    });
    // Every run and its queue row agree after each case (issue 53).
    afterEach(async () => {
      expect(await queue.queueDrift()).toEqual([]);
    });

    /** A ready run of a saved continuation; returns its id. */
    async function readyRun() {
      const runId = randomUUID();
      const suspension = sampleSuspension({ sessionId: 'c', runId, messages: true });
      await new PostgresContinuationStore(db).save(suspension);
      await queue.create({
        runId,
        conversationId: 'c',
        status: 'waiting',
        interactionId: suspension.interactionId,
      });
      await queue.markReady(suspension.interactionId, { action: 'accept', content: 'x' });
      return runId;
    }

    /**
     * A worker process that holds a lease-holder lock, and how it dies. On PGlite (one
     * session, one process) a holder key is all there is: the process that held any other
     * key has ended.
     */
    async function process() {
      if (t.kind === 'pglite') return { holder: randomHolderKey(), die: async () => {} };
      const client = postgres(target.url ?? '', { max: 1, onnotice: () => {} });
      const holder = await takeHolderLock(drizzle({ client }) as unknown as ContinuationDatabase);
      return { holder, die: () => client.end({ timeout: 1 }) };
    }

    it('a lease whose holder is gone is claimable at once, counted as a lost attempt; its worker is refused', async () => {
      const runId = await readyRun();
      const dead = await process();
      const first = owner();
      await queue.claim({ owner: first, leaseMs: LEASE, holder: dead.holder });
      // The process's own workers leave its leases alone.
      expect(await queue.claim({ owner: owner(), leaseMs: LEASE, holder: dead.holder })).toBe(
        undefined,
      );
      await dead.die();
      const me = await process();
      expect(await queue.leases({ holder: me.holder })).toEqual([
        expect.objectContaining({ runId, owner: first, holder: 'gone' }),
      ]);
      expect(await queue.nextDueInMs(me.holder)).toBe(0);
      const taken = await queue.claim({ owner: owner(), leaseMs: LEASE, holder: me.holder });
      expect(taken?.run).toMatchObject({ runId, attempts: 2, lostAttempts: 1 });
      expect(await queue.leases({ holder: me.holder })).toEqual([
        expect.objectContaining({ runId, holder: 'self' }),
      ]);
      expect(await queue.renew(runId, first, LEASE)).toBe(false);
      await expect(
        queue.finish(runId, first, { status: 'completed', messages: [reply] }),
      ).rejects.toSatisfy((e) => ContinuationError.hasCode(e, 'lease_lost'));
      await me.die();
    });

    it('a lease claimed without a holder (through a pooler) counts until it expires', async () => {
      const runId = await readyRun();
      await queue.claim({ owner: owner(), leaseMs: LEASE });
      const me = await process();
      expect(await queue.claim({ owner: owner(), leaseMs: LEASE, holder: me.holder })).toBe(
        undefined,
      );
      expect(await queue.leases({ holder: me.holder })).toEqual([
        expect.objectContaining({ runId, holder: 'unknown' }),
      ]);
      expect(await queue.nextDueInMs(me.holder)).toBeGreaterThan(LEASE / 2);
      await me.die();
    });

    it('giveUp fails a claimed run without counting the claim as an attempt', async () => {
      const runId = await readyRun();
      const first = owner();
      await queue.claim({ owner: first, leaseMs: LEASE, holder: randomHolderKey() });
      await makeDue(db, runId);
      const second = owner();
      expect((await queue.claim({ owner: second, leaseMs: LEASE }))?.run.attempts).toBe(2);
      await expect(queue.giveUp(runId, first, 'no')).rejects.toSatisfy((e) =>
        ContinuationError.hasCode(e, 'lease_lost'),
      );
      await queue.giveUp(runId, second, 'every attempt ended with its worker gone');
      expect(await queue.get(runId)).toMatchObject({
        status: 'failed',
        attempts: 1,
        lostAttempts: 1,
        lastError: 'every attempt ended with its worker gone',
      });
    });

    it.skipIf(t.kind === 'pglite')(
      'a live holder keeps its leases until they expire, and its key is nobody else’s',
      async () => {
        const runId = await readyRun();
        const alive = await process();
        await queue.claim({ owner: owner(), leaseMs: LEASE, holder: alive.holder });
        const client = postgres(target.url ?? '', { max: 1, onnotice: () => {} });
        try {
          const other = drizzle({ client }) as unknown as ContinuationDatabase;
          const mine = await takeHolderLock(other, alive.holder);
          expect(mine).not.toBe(alive.holder);
          expect(await queue.claim({ owner: owner(), leaseMs: LEASE, holder: mine })).toBe(
            undefined,
          );
          expect(await queue.leases({ holder: mine })).toEqual([
            expect.objectContaining({ runId, holder: 'alive' }),
          ]);
          expect(await queue.nextDueInMs(mine)).toBeGreaterThan(LEASE / 2);
        } finally {
          await client.end({ timeout: 1 });
          await alive.die();
        }
      },
    );
  });
}
