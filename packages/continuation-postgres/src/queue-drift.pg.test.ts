import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { openServerTarget, type SqlTarget, serverForTests } from '@internal/pg-test';
import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ContinuationDatabase,
  migrate,
  PostgresContinuationStore,
  PostgresRunQueue,
} from './index.js';
import { clearRuns } from './testing/fixtures/run-rows.js';
import { waitingRun } from './testing/fixtures/waiting-run.js';

const serverUrl = await serverForTests();

// Two writes of one run overlap only on a server: the second waits for the first's row lock
// and reads the run as the first committed it (issue 53).
describe.skipIf(serverUrl === undefined)(
  'the run queue under overlapping writes of one run (server)',
  () => {
    let target: SqlTarget;
    let db: ContinuationDatabase;
    let queue: PostgresRunQueue;
    let store: PostgresContinuationStore;
    beforeAll(async () => {
      target = await openServerTarget(serverUrl ?? '');
      db = target.db;
      await migrate(db);
      queue = new PostgresRunQueue(db);
      store = new PostgresContinuationStore(db);
    });
    afterAll(() => target?.close());
    beforeEach(() => clearRuns(db));
    afterEach(async () => {
      expect(await queue.queueDrift()).toEqual([]);
    });

    /** Resolves once some session of the test database waits for a lock. */
    async function aWriteWaits(): Promise<void> {
      for (let tries = 0; tries < 500; tries++) {
        const [row] = rowsOf(
          await db.execute(
            sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
          ),
        );
        if (Number(row?.n) > 0) return;
        await sleep(10);
      }
      throw new Error('no write waited for the held run');
    }

    /**
     * Runs `holding` in a transaction, then `waiting` from the pool while that transaction still
     * holds the run, and commits once `waiting` waits for it: returns what `waiting` returned.
     */
    async function overlap<T>(
      holding: (tx: PostgresRunQueue) => Promise<unknown>,
      waiting: () => Promise<T>,
    ): Promise<T> {
      let second: Promise<T> | undefined;
      await db.transaction(async (tx) => {
        await holding(new PostgresRunQueue(tx));
        second = waiting();
        second.catch(() => {});
        await aWriteWaits();
      });
      return second as Promise<T>;
    }

    /** A run claimed by a new owner with a lease of `leaseMs`. */
    async function claimedRun(leaseMs = 60_000) {
      const waiting = await waitingRun(store, queue);
      await queue.markReady(waiting.interactionId, { action: 'accept', content: 'yes' });
      const owner = `worker-${randomUUID()}`;
      const claimed = await queue.claim({ owner, leaseMs });
      expect(claimed?.run.runId).toBe(waiting.runId);
      return { ...waiting, owner };
    }

    /** The lease renewed by the lease keeper's timer while the worker's own transaction renews it. */
    async function renewedTwice(run: { runId: string; owner: string }, leaseMs = 60_000) {
      const renewed = await overlap(
        (tx) => tx.renew(run.runId, run.owner, leaseMs),
        () => queue.renew(run.runId, run.owner, leaseMs),
      );
      expect(renewed).toBe(true);
    }

    it('two renewals of one lease leave its queue row at the run’s time', async () => {
      const run = await claimedRun();
      await renewedTwice(run);
      expect(await queue.queueDrift()).toEqual([]);
    });

    it('a run whose worker died after two overlapping renewals is taken over when its lease expires', async () => {
      const run = await claimedRun();
      await renewedTwice(run, 300);
      await sleep(400);
      const taken = await queue.claim({ owner: `worker-${randomUUID()}`, leaseMs: 60_000 });
      expect(taken?.run).toMatchObject({ runId: run.runId, lostAttempts: 1 });
    });

    it('a run that then waits on a question with a deadline is claimed once the question is answered', async () => {
      const run = await claimedRun();
      await renewedTwice(run);
      const next = `ask-${randomUUID()}`;
      await queue.finish(run.runId, run.owner, {
        status: 'waiting',
        interactionId: next,
        deadlineAt: new Date(Date.now() + 3_600_000),
      });
      expect(await queue.markReady(next, { action: 'accept', content: 'ok' })).toMatchObject({
        status: 'ready',
      });
      const taken = await queue.claim({ owner: `worker-${randomUUID()}`, leaseMs: 60_000 });
      expect(taken?.run).toMatchObject({
        runId: run.runId,
        input: { action: 'accept', content: 'ok' },
      });
    });

    it('a run that then waits on a question whose deadline passes is claimed at the deadline', async () => {
      const run = await claimedRun();
      await renewedTwice(run);
      await queue.finish(run.runId, run.owner, {
        status: 'waiting',
        interactionId: `ask-${randomUUID()}`,
        deadlineAt: new Date(Date.now() + 200),
      });
      await sleep(300);
      const taken = await queue.claim({ owner: `worker-${randomUUID()}`, leaseMs: 60_000 });
      expect(taken?.run).toMatchObject({ runId: run.runId, input: null });
    });

    it('a run that then completes leaves no queue row behind', async () => {
      const run = await claimedRun();
      await renewedTwice(run);
      await queue.complete(run.runId, run.owner, []);
      const [row] = rowsOf(
        await db.execute(
          sql`select count(*)::int as n from x_continuation.run_queue where run_id = ${run.runId}`,
        ),
      );
      expect(Number(row?.n)).toBe(0);
    });

    it('a conversation stopped while an answer readies its run leaves no queue row behind', async () => {
      const waiting = await waitingRun(store, queue);
      const cancelled = await overlap(
        (tx) => tx.markReady(waiting.interactionId, { action: 'accept', content: 'yes' }),
        () => queue.cancelConversation('c1'),
      );
      expect(cancelled).toBe(1);
      expect((await queue.get(waiting.runId))?.status).toBe('cancelled');
    });

    it('a release that waited for the worker’s own renewal leaves the run claimable at once', async () => {
      const run = await claimedRun();
      const released = await overlap(
        (tx) => tx.renew(run.runId, run.owner, 60_000),
        () => queue.release(run.runId, run.owner),
      );
      expect(released).toBe(true);
      const taken = await queue.claim({ owner: `worker-${randomUUID()}`, leaseMs: 60_000 });
      expect(taken?.run.runId).toBe(run.runId);
    });

    it('a failed attempt that waited for a renewal is retried after its backoff', async () => {
      const run = await claimedRun();
      await overlap(
        (tx) => tx.renew(run.runId, run.owner, 60_000),
        () => queue.fail(run.runId, run.owner, 'model failed', 0),
      );
      const taken = await queue.claim({ owner: `worker-${randomUUID()}`, leaseMs: 60_000 });
      expect(taken?.run).toMatchObject({ runId: run.runId, lastError: 'model failed' });
    });
  },
);
