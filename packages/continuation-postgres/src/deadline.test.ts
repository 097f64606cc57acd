import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ContinuationDatabase,
  migrate,
  PostgresContinuationStore,
  PostgresRunQueue,
} from './index.js';
import { clearRuns } from './testing/fixtures/run-rows.js';
import { waitingRun as fixture } from './testing/fixtures/waiting-run.js';

const LEASE = 60_000;
const hourFromNow = () => new Date(Date.now() + 3_600_000);

for (const t of await sqlTargets()) {
  describe.skipIf(t.skip)(`a waiting run's deadline (${t.kind})`, () => {
    let target: SqlTarget;
    let db: ContinuationDatabase;
    let queue: PostgresRunQueue;
    let store: PostgresContinuationStore;
    beforeAll(async () => {
      target = await t.open();
      db = target.db;
      await migrate(db);
      queue = new PostgresRunQueue(db);
      store = new PostgresContinuationStore(db);
    });
    afterAll(() => target?.close());
    beforeEach(async () => {
      await clearRuns(db);
      await db.execute(sql`delete from x_continuation.suspensions`);
    });
    // Every run and its queue row agree after each case (issue 53).
    afterEach(async () => {
      expect(await queue.queueDrift()).toEqual([]);
    });

    const waitingRun = async (deadlineAt?: Date, dueAt?: Date) =>
      fixture(store, queue, { ...(deadlineAt ? { deadlineAt } : {}), ...(dueAt ? { dueAt } : {}) });

    it('a due time before the deadline (a reminder) is claimed then, and the run may wait again', async () => {
      const deadline = hourFromNow();
      const { runId, interactionId } = await waitingRun(deadline, new Date(Date.now() - 1000));
      const claimed = await queue.claim({ owner: 'w1', leaseMs: LEASE });
      expect(claimed?.run).toMatchObject({ runId, input: null, deadlineAt: deadline });
      // What was due is applied; it waits until its next due time, its deadline kept.
      await queue.finish(runId, 'w1', {
        status: 'waiting',
        interactionId,
        deadlineAt: deadline,
        dueAt: new Date(Date.now() + 60_000),
      });
      expect(await queue.get(runId)).toMatchObject({ status: 'waiting', deadlineAt: deadline });
      expect(await queue.claim({ owner: 'w2', leaseMs: LEASE })).toBeUndefined();
      const ms = (await queue.nextDueInMs()) ?? 0;
      expect(ms).toBeGreaterThan(50_000);
      expect(ms).toBeLessThanOrEqual(61_000);
      // An answer readies it as ever.
      expect(
        await queue.markReady(interactionId, { action: 'accept', content: 'ok' }),
      ).toMatchObject({ status: 'ready', deadlineAt: null });
    });

    it('a waiting run is claimed at its deadline, without an answer, its deadline kept', async () => {
      const at = new Date(Date.now() - 1000);
      const { runId, interactionId } = await waitingRun(at);
      await waitingRun(); // no deadline: never claimed
      expect(await queue.get(runId)).toMatchObject({ status: 'waiting', deadlineAt: at });
      expect(await queue.nextDueInMs()).toBe(0);
      const claimed = await queue.claim({ owner: 'w1', leaseMs: LEASE });
      expect(claimed?.run).toMatchObject({ runId, status: 'running', input: null, deadlineAt: at });
      expect(claimed?.suspension?.interactionId).toBe(interactionId);
      expect(await queue.claim({ owner: 'w2', leaseMs: LEASE })).toBeUndefined();
      // An answer that comes now finds no waiting run: the worker holds it.
      expect(
        await queue.markReady(interactionId, { action: 'accept', content: 'late' }),
      ).toBeUndefined();
    });

    it('before its deadline it is not claimed, and the next due time is the deadline', async () => {
      await waitingRun(hourFromNow());
      expect(await queue.claim({ owner: 'w1', leaseMs: LEASE })).toBeUndefined();
      const ms = (await queue.nextDueInMs()) ?? 0;
      expect(ms).toBeGreaterThan(3_500_000);
      expect(ms).toBeLessThanOrEqual(3_601_000);
    });

    it('an answer in time readies the run and clears its deadline; one without a deadline has no due time', async () => {
      const { runId, interactionId } = await waitingRun(hourFromNow());
      const ready = await queue.markReady(interactionId, { action: 'accept', content: 'yes' });
      expect(ready).toMatchObject({ status: 'ready', deadlineAt: null });
      const claimed = await queue.claim({ owner: 'w1', leaseMs: LEASE });
      expect(claimed?.run).toMatchObject({
        runId,
        deadlineAt: null,
        input: { action: 'accept', content: 'yes' },
      });
      await queue.finish(runId, 'w1', { status: 'waiting', interactionId: 'next' });
      expect(await queue.get(runId)).toMatchObject({ status: 'waiting', deadlineAt: null });
      expect(await queue.nextDueInMs()).toBeUndefined();
    });

    it('a run that asks again waits until the new deadline; many answers clear theirs', async () => {
      const { runId, interactionId } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'yes' });
      await queue.claim({ owner: 'w1', leaseMs: LEASE });
      const at = new Date(Date.now() - 10);
      await queue.finish(runId, 'w1', { status: 'waiting', interactionId: 'next', deadlineAt: at });
      expect(await queue.get(runId)).toMatchObject({ status: 'waiting', deadlineAt: at });
      const other = await waitingRun(hourFromNow());
      expect(await queue.markReadyMany([{ interactionId: other.interactionId, input: null }])).toBe(
        1,
      );
      expect(await queue.get(other.runId)).toMatchObject({ status: 'ready', deadlineAt: null });
      const claimed = await queue.claim({ owner: 'w2', leaseMs: LEASE });
      expect(claimed?.run).toMatchObject({ runId, deadlineAt: at, input: null });
    });
  });
}
