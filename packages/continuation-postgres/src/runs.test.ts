import { randomUUID } from 'node:crypto';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { ContinuationError } from '@x/continuation';
import { sampleSuspension } from '@x/continuation/testing';
import { pipelinedTransaction, prepareOnce, rowsOf } from '@x/postgres-kit';
import type { Message } from '@x/wire';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ContinuationDatabase,
  migrate,
  PostgresContinuationStore,
  PostgresRunQueue,
  RUN_READY_CHANNEL,
  RUN_RELEASED_CHANNEL,
} from './index.js';
import { clearRuns, makeDue as makeRunDue, setQueuedRun } from './testing/fixtures/run-rows.js';
import { waitingRun as fixture } from './testing/fixtures/waiting-run.js';

const LEASE = 60_000;
const reply: Message = { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] };

for (const t of await sqlTargets()) {
  describe.skipIf(t.skip)(`PostgresRunQueue (${t.kind})`, () => {
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

    /** A run waiting on a saved continuation of its conversation; returns its ids. */
    const waitingRun = (conversationId = 'c1') =>
      fixture(store, queue, { conversationId, meta: { model: 'scripted:trip' } });

    /** Moves the run's due time into the past: its lease expired, or its backoff ended. */
    const makeDue = (runId: string) => makeRunDue(db, runId);

    const owner = () => `worker-${randomUUID()}`;

    it('a waiting run is not claimable; its answer makes it ready, and one claim takes it with the record and the answer', async () => {
      const { runId, interactionId, suspension } = await waitingRun();
      expect(await queue.claim({ owner: owner(), leaseMs: LEASE })).toBeUndefined();
      const ready = await queue.markReady(interactionId, { action: 'accept', content: 'Lisbon' });
      expect(ready).toMatchObject({ runId, status: 'ready', attempts: 0 });
      expect(ready?.readyAt).toBeInstanceOf(Date);
      const me = owner();
      const claimed = await queue.claim({ owner: me, leaseMs: LEASE });
      expect(claimed?.run).toMatchObject({
        runId,
        status: 'running',
        attempts: 1,
        leaseOwner: me,
        input: { action: 'accept', content: 'Lisbon' },
        meta: { model: 'scripted:trip' },
      });
      expect(claimed?.run.leaseExpiresAt?.getTime()).toBeGreaterThan(Date.now() + LEASE / 2);
      expect(claimed?.suspension).toEqual(suspension);
      // When the answer readied it, as the claim found it (before it set the lease).
      expect(claimed?.claimableAt?.getTime()).toBe(ready?.readyAt?.getTime());
      // Leased: nobody else gets it.
      expect(await queue.claim({ owner: owner(), leaseMs: LEASE })).toBeUndefined();
    });

    it('census counts runs by status and the leases held now', async () => {
      await waitingRun('c1');
      const { interactionId } = await waitingRun('c2');
      await waitingRun('c3');
      await queue.markReady(interactionId, { action: 'accept' });
      expect(await queue.census()).toEqual({
        byStatus: { running: 0, waiting: 2, ready: 1, completed: 0, cancelled: 0, failed: 0 },
        leased: 0,
      });
      await queue.claim({ owner: owner(), leaseMs: LEASE });
      expect(await queue.census()).toMatchObject({
        byStatus: { running: 1, waiting: 2, ready: 0 },
        leased: 1,
      });
    });

    it('a continuation written by a newer version is claimed as unreadable (never thrown, never misread), so the run can be failed', async () => {
      const { runId, interactionId } = await waitingRun();
      await db.execute(
        sql`update x_continuation.suspensions set record = jsonb_set(record::jsonb, '{version}', '99')::text where interaction_id = ${interactionId}`,
      );
      await queue.markReady(interactionId, { action: 'accept', content: 'Lisbon' });
      const me = owner();
      const claimed = await queue.claim({ owner: me, leaseMs: LEASE });
      expect(claimed?.run).toMatchObject({ runId, status: 'running', leaseOwner: me });
      expect(claimed?.suspension).toBeUndefined();
      expect(claimed?.unreadable).toMatchObject({ code: 'unsupported_version', interactionId });
      expect(claimed?.unreadable?.message).toContain('version 99');
      await queue.fail(runId, me, claimed?.unreadable?.message ?? '', undefined);
      expect(await queue.claim({ owner: owner(), leaseMs: LEASE })).toBeUndefined();
    });

    it('a claim skips the runs it is told to', async () => {
      const a = await waitingRun('a');
      const b = await waitingRun('b');
      await queue.markReady(a.interactionId, { action: 'accept', content: 'x' });
      await queue.markReady(b.interactionId, { action: 'accept', content: 'x' });
      const claimed = await queue.claim({ owner: owner(), leaseMs: LEASE, skip: [a.runId] });
      expect(claimed?.run.runId).toBe(b.runId);
      expect(await queue.claim({ owner: owner(), leaseMs: LEASE, skip: [a.runId] })).toBe(
        undefined,
      );
    });

    it('markReady of a question no run waits on changes nothing', async () => {
      expect(await queue.markReady('nobody-waits', { action: 'accept', content: '' })).toBe(
        undefined,
      );
      const { interactionId } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'a' });
      // A second answer does not make a ready run ready again.
      expect(await queue.markReady(interactionId, { action: 'accept', content: 'b' })).toBe(
        undefined,
      );
    });

    it('markReadyIn readies a waiting run in the caller’s pipelined transaction, and commits only with it', async () => {
      const { runId, interactionId } = await waitingRun();
      const input = { action: 'accept', content: 'Lisbon' };
      const failing = prepareOnce(() => sql`select 1 / ${sql.placeholder('zero')}::int`);
      await expect(
        pipelinedTransaction(db, async (tx) => {
          void queue.markReadyIn(tx, interactionId, input);
          void tx.run(failing, { zero: 0 });
        }),
      ).rejects.toThrow();
      expect((await queue.get(runId))?.status).toBe('waiting');
      const readied = await pipelinedTransaction(db, (tx) =>
        queue.markReadyIn(tx, interactionId, input),
      );
      expect(readied).toBe(true);
      expect(await queue.get(runId)).toMatchObject({ status: 'ready', input });
      expect(
        await pipelinedTransaction(db, (tx) => queue.markReadyIn(tx, interactionId, input)),
      ).toBe(false);
    });

    it('markReadyMany readies the waiting runs of many answers in one statement', async () => {
      const a = await waitingRun('a');
      const b = await waitingRun('b');
      const answered = await queue.markReadyMany([
        { interactionId: a.interactionId, input: { action: 'accept', content: 'A' } },
        { interactionId: b.interactionId, input: { action: 'decline', content: '' } },
        { interactionId: 'nobody-waits', input: {} },
      ]);
      expect(answered).toBe(2);
      expect(await queue.get(b.runId)).toMatchObject({
        status: 'ready',
        input: { action: 'decline', content: '' },
      });
    });

    it('concurrent claims each take a different run', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const { runId, interactionId } = await waitingRun(`c${i}`);
        await queue.markReady(interactionId, { action: 'accept', content: String(i) });
        ids.push(runId);
      }
      const claims = await Promise.all(
        Array.from({ length: 16 }, () => queue.claim({ owner: owner(), leaseMs: LEASE })),
      );
      const taken = claims.flatMap((c) => (c ? [c.run.runId] : []));
      expect(taken.sort()).toEqual(ids.sort());
    });

    it('completes a run: the transcript is the continuation messages plus what the resume added', async () => {
      const { runId, interactionId, suspension } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'x' });
      const me = owner();
      await queue.claim({ owner: me, leaseMs: LEASE });
      expect(await queue.transcript(runId)).toBeUndefined();
      await queue.finish(runId, me, { status: 'completed', messages: [reply] });
      await store.markResolved(interactionId);
      const run = await queue.get(runId);
      expect(run).toMatchObject({ status: 'completed', leaseExpiresAt: null });
      expect(run?.finishedAt).toBeInstanceOf(Date);
      expect(await queue.transcript(runId)).toEqual([...(suspension.messages ?? []), reply]);
    });

    it('complete records the run completed and resolves its continuation in one statement', async () => {
      const { runId, interactionId, suspension } = await waitingRun();
      expect(await queue.get(runId)).toMatchObject({
        finishedAt: null,
        meta: { model: 'scripted:trip' },
      });
      await queue.markReady(interactionId, { action: 'accept', content: 'x' });
      const me = owner();
      await queue.claim({ owner: me, leaseMs: LEASE });
      await queue.complete(runId, me, [reply]);
      expect(await queue.get(runId)).toMatchObject({ status: 'completed', leaseExpiresAt: null });
      expect(await queue.transcript(runId)).toEqual([...(suspension.messages ?? []), reply]);
      await expect(store.markResolved(interactionId)).rejects.toSatisfy((e) =>
        ContinuationError.hasCode(e, 'already_resolved'),
      );
    });

    it('complete by a worker that lost its lease writes nothing: the continuation stays open', async () => {
      const { runId, interactionId } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'x' });
      const first = owner();
      await queue.claim({ owner: first, leaseMs: LEASE });
      await makeDue(runId);
      const second = owner();
      await queue.claim({ owner: second, leaseMs: LEASE });
      await expect(queue.complete(runId, first, [reply])).rejects.toSatisfy((e) =>
        ContinuationError.hasCode(e, 'lease_lost'),
      );
      expect(await queue.get(runId)).toMatchObject({ status: 'running', leaseOwner: second });
      expect((await store.load(interactionId)).resolved).toBe(false);
      await queue.complete(runId, second, [reply]);
      expect((await queue.get(runId))?.status).toBe('completed');
    });

    it('complete of a run whose continuation was resolved by another route leaves the run running', async () => {
      const { runId, interactionId } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'x' });
      const me = owner();
      await queue.claim({ owner: me, leaseMs: LEASE });
      await store.markResolved(interactionId);
      await expect(queue.complete(runId, me, [reply])).rejects.toSatisfy((e) =>
        ContinuationError.hasCode(e, 'already_resolved'),
      );
      expect(await queue.get(runId)).toMatchObject({ status: 'running', leaseOwner: me });
    });

    it('concurrent completes of one run by its worker and a stale one: exactly one wins', async () => {
      const { runId, interactionId } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'x' });
      const stale = owner();
      await queue.claim({ owner: stale, leaseMs: LEASE });
      await makeDue(runId);
      const current = owner();
      await queue.claim({ owner: current, leaseMs: LEASE });
      const results = await Promise.allSettled([
        queue.complete(runId, stale, [reply]),
        queue.complete(runId, current, [reply]),
      ]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
      expect(await queue.get(runId)).toMatchObject({ status: 'completed', leaseOwner: current });
    });

    it('a run that asked again waits on the new question, its attempts counted from zero', async () => {
      const { runId, interactionId } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'x' });
      const me = owner();
      await queue.claim({ owner: me, leaseMs: LEASE });
      const next = sampleSuspension({ sessionId: 'c1', runId, messages: true });
      await store.save(next);
      await queue.finish(runId, me, { status: 'waiting', interactionId: next.interactionId });
      expect(await queue.get(runId)).toMatchObject({
        status: 'waiting',
        interactionId: next.interactionId,
        attempts: 0,
        input: null,
      });
      await queue.markReady(next.interactionId, { action: 'decline', content: '' });
      const again = await queue.claim({ owner: owner(), leaseMs: LEASE });
      expect(again?.suspension?.interactionId).toBe(next.interactionId);
    });

    it('an expired lease makes the run claimable again; the first worker can neither renew nor finish', async () => {
      const { runId, interactionId } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'x' });
      const first = owner();
      await queue.claim({ owner: first, leaseMs: LEASE });
      expect(await queue.renew(runId, first, LEASE)).toBe(true);
      await makeDue(runId);
      const second = owner();
      const taken = await queue.claim({ owner: second, leaseMs: LEASE });
      expect(taken?.run).toMatchObject({ runId, attempts: 2, leaseOwner: second });
      expect(await queue.renew(runId, first, LEASE)).toBe(false);
      const refused = await queue
        .finish(runId, first, { status: 'completed', messages: [reply] })
        .catch((e: unknown) => e);
      expect(ContinuationError.hasCode(refused, 'lease_lost')).toBe(true);
      await expect(queue.fail(runId, first, 'boom', 10)).rejects.toSatisfy((e) =>
        ContinuationError.hasCode(e, 'lease_lost'),
      );
      await queue.finish(runId, second, { status: 'completed', messages: [reply] });
      expect((await queue.get(runId))?.status).toBe('completed');
    });

    it('release by its lease owner makes the run claimable at once, uncounted; the releaser can write nothing after it', async () => {
      const { runId, interactionId } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'x' });
      const first = owner();
      await queue.claim({ owner: first, leaseMs: LEASE });
      expect(await queue.release(runId, first)).toBe(true);
      const released = await queue.get(runId);
      expect(released).toMatchObject({ status: 'ready', attempts: 0, lastError: null });
      expect(released?.readyAt?.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
      expect(await queue.nextDueInMs()).toBe(0);
      expect(await queue.renew(runId, first, LEASE)).toBe(false);
      expect(await queue.release(runId, first), 'released once').toBe(false);
      const second = owner();
      const taken = await queue.claim({ owner: second, leaseMs: LEASE });
      expect(taken?.run).toMatchObject({ runId, attempts: 1, leaseOwner: second });
      await expect(queue.complete(runId, first, [reply])).rejects.toSatisfy((e) =>
        ContinuationError.hasCode(e, 'lease_lost'),
      );
      await expect(queue.fail(runId, first, 'boom', 10)).rejects.toSatisfy((e) =>
        ContinuationError.hasCode(e, 'lease_lost'),
      );
      await queue.complete(runId, second, [reply]);
      expect((await queue.get(runId))?.status).toBe('completed');
      await expect(store.markResolved(interactionId)).rejects.toSatisfy((e) =>
        ContinuationError.hasCode(e, 'already_resolved'),
      );
    });

    it('release notifies RUN_RELEASED_CHANNEL with the run id: a listening worker hears of it at once', async () => {
      const heard: string[] = [];
      // postgres.js resolves to { unlisten }, PGlite to the unsubscribe function itself.
      const client = target.client as unknown as {
        listen(channel: string, onPayload: (payload: string) => void): Promise<unknown>;
      };
      const subscription = await client.listen(RUN_RELEASED_CHANNEL, (p) => heard.push(p));
      try {
        const { runId, interactionId } = await waitingRun();
        await queue.markReady(interactionId, { action: 'accept', content: 'x' });
        const me = owner();
        await queue.claim({ owner: me, leaseMs: LEASE });
        expect(heard).toEqual([]);
        await queue.release(runId, me);
        await expect.poll(() => heard, { timeout: 10_000 }).toEqual([runId]);
        expect(await queue.release(runId, me)).toBe(false);
      } finally {
        await (typeof subscription === 'function'
          ? subscription()
          : (subscription as { unlisten(): Promise<void> }).unlisten());
      }
    });

    it('release by anyone but the lease owner changes nothing: a worker whose run was taken over, a finished run', async () => {
      const { runId, interactionId } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'x' });
      const first = owner();
      await queue.claim({ owner: first, leaseMs: LEASE });
      await makeDue(runId);
      const second = owner();
      await queue.claim({ owner: second, leaseMs: LEASE });
      expect(await queue.release(runId, first)).toBe(false);
      expect(await queue.get(runId)).toMatchObject({
        status: 'running',
        leaseOwner: second,
        attempts: 2,
      });
      await queue.finish(runId, second, { status: 'failed', error: 'boom' });
      expect(await queue.release(runId, second)).toBe(false);
      expect((await queue.get(runId))?.status).toBe('failed');
    });

    it('a claim lost with its commit leaves the run ready: the next worker takes it and the first is refused', async () => {
      // What a crash after an asynchronous claim commit looks like: the row as before it.
      const { runId, interactionId } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'x' });
      const first = owner();
      await queue.claim({ owner: first, leaseMs: LEASE });
      await setQueuedRun(
        db,
        runId,
        sql`status = 'ready', lease_owner = null, attempts = 0, claimable_at = now()`,
      );
      const second = owner();
      expect((await queue.claim({ owner: second, leaseMs: LEASE }))?.run.runId).toBe(runId);
      await expect(
        queue.finish(runId, first, { status: 'completed', messages: [reply] }),
      ).rejects.toSatisfy((e) => ContinuationError.hasCode(e, 'lease_lost'));
      await queue.finish(runId, second, { status: 'completed', messages: [reply] });
    });

    it('a failed attempt backs off before the run is claimable again; with no retry left it fails', async () => {
      const { runId, interactionId } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'x' });
      const me = owner();
      await queue.claim({ owner: me, leaseMs: LEASE });
      expect(await queue.fail(runId, me, 'model: 500', 3_600_000)).toBe('ready');
      const backingOff = await queue.get(runId);
      expect(backingOff).toMatchObject({ status: 'ready', lastError: 'model: 500', attempts: 1 });
      expect(backingOff?.readyAt?.getTime()).toBeGreaterThan(Date.now() + 3_000_000);
      expect(await queue.claim({ owner: owner(), leaseMs: LEASE })).toBeUndefined();
      await makeDue(runId);
      const again = owner();
      expect((await queue.claim({ owner: again, leaseMs: LEASE }))?.run.attempts).toBe(2);
      expect(await queue.fail(runId, again, 'model: 500 again', undefined)).toBe('failed');
      expect(await queue.get(runId)).toMatchObject({
        status: 'failed',
        lastError: 'model: 500 again',
      });
      expect(await queue.claim({ owner: owner(), leaseMs: LEASE })).toBeUndefined();
      // retry makes it ready now, attempts from zero.
      expect(await queue.retry(runId)).toMatchObject({ status: 'ready', attempts: 0 });
      expect((await queue.claim({ owner: owner(), leaseMs: LEASE }))?.run.attempts).toBe(1);
    });

    it('a run that completes after a failed attempt keeps no last error (finish and complete)', async () => {
      for (const end of ['finish', 'complete'] as const) {
        const { runId, interactionId } = await waitingRun();
        await queue.markReady(interactionId, { action: 'accept', content: 'x' });
        const first = owner();
        await queue.claim({ owner: first, leaseMs: LEASE });
        await queue.fail(runId, first, 'model: 500', undefined);
        await queue.retry(runId);
        const again = owner();
        await queue.claim({ owner: again, leaseMs: LEASE });
        if (end === 'finish')
          await queue.finish(runId, again, { status: 'completed', messages: [reply] });
        else await queue.complete(runId, again, [reply]);
        expect(await queue.get(runId), end).toMatchObject({ status: 'completed', lastError: null });
      }
    });

    it('nextDueInMs says when the next run becomes claimable: a backoff, a lease, now, or never', async () => {
      expect(await queue.nextDueInMs()).toBeUndefined();
      const backingOff = await waitingRun();
      const leased = await waitingRun();
      expect(await queue.nextDueInMs(), 'waiting runs are never due').toBeUndefined();
      await queue.markReady(backingOff.interactionId, { action: 'accept', content: 'x' });
      const me = owner();
      await queue.claim({ owner: me, leaseMs: LEASE });
      await queue.fail(backingOff.runId, me, 'model: 500', 3_600_000);
      const backoff = await queue.nextDueInMs();
      expect(backoff).toBeGreaterThan(3_500_000);
      expect(backoff).toBeLessThanOrEqual(3_600_000);
      await queue.markReady(leased.interactionId, { action: 'accept', content: 'y' });
      await queue.claim({ owner: owner(), leaseMs: LEASE });
      const lease = await queue.nextDueInMs();
      expect(lease, 'the lease ends before the backoff').toBeGreaterThan(LEASE / 2);
      expect(lease).toBeLessThanOrEqual(LEASE);
      await makeDue(leased.runId);
      expect(await queue.nextDueInMs(), 'an expired lease is due now').toBe(0);
    });

    it('a claim says when the next other run is due, through the same statement', async () => {
      const first = await waitingRun();
      const later = await waitingRun();
      await waitingRun(); // waiting without a due time: never due
      await queue.markReady(first.interactionId, { action: 'accept', content: 'x' });
      const alone = await queue.claim({ owner: owner(), leaseMs: LEASE });
      expect(alone?.run.runId).toBe(first.runId);
      expect(alone?.nextDueInMs, 'no other run has a due time').toBeUndefined();
      await queue.markReady(later.interactionId, { action: 'accept', content: 'y' });
      const second = await waitingRun();
      await queue.markReady(second.interactionId, { action: 'accept', content: 'z' });
      const claimed = await queue.claim({ owner: owner(), leaseMs: LEASE });
      expect(claimed?.run.runId).toBe(later.runId);
      expect(claimed?.nextDueInMs, 'another ready run is due now').toBe(0);
      const last = await queue.claim({ owner: owner(), leaseMs: LEASE });
      expect(last?.run.runId).toBe(second.runId);
      // The others are running: the soonest of their leases.
      expect(last?.nextDueInMs).toBeGreaterThan(LEASE / 2);
      expect(last?.nextDueInMs).toBeLessThanOrEqual(LEASE);
    });

    it('the writes that make a run claimable without a claim notify RUN_READY_CHANNEL with its id', async () => {
      const heard: string[] = [];
      const client = target.client as unknown as {
        listen(channel: string, onPayload: (payload: string) => void): Promise<unknown>;
      };
      const subscription = await client.listen(RUN_READY_CHANNEL, (p) => heard.push(p));
      try {
        const plain = await waitingRun();
        const due = await fixture(store, queue, { dueAt: new Date(Date.now() + LEASE) });
        const many = await waitingRun();
        await queue.markReady(plain.interactionId, { action: 'accept', content: 'x' });
        await queue.markReadyMany([{ interactionId: many.interactionId, input: 'y' }]);
        const me = owner();
        const claimed = await queue.claim({ owner: me, leaseMs: LEASE });
        await queue.finish(claimed?.run.runId ?? '', me, {
          status: 'waiting',
          interactionId: randomUUID(),
          dueAt: new Date(Date.now() + LEASE),
        });
        const other = owner();
        const failing = await queue.claim({ owner: other, leaseMs: LEASE });
        await queue.fail(failing?.run.runId ?? '', other, 'model: 400', undefined);
        await queue.retry(failing?.run.runId ?? '');
        const expected = [
          due.runId,
          plain.runId,
          many.runId,
          claimed?.run.runId,
          failing?.run.runId,
        ];
        await expect.poll(() => heard, { timeout: 10_000 }).toEqual(expected);
        // Waiting without a due time, and a claim: nothing to hear.
        await waitingRun();
        expect(heard).toEqual(expected);
      } finally {
        await (typeof subscription === 'function'
          ? subscription()
          : (subscription as { unlisten(): Promise<void> }).unlisten());
      }
    });

    it('retry refuses an unknown run and one that has not failed', async () => {
      const { runId } = await waitingRun();
      await expect(queue.retry('no-such-run')).rejects.toSatisfy((e) =>
        ContinuationError.hasCode(e, 'not_found'),
      );
      await expect(queue.retry(runId)).rejects.toSatisfy((e) =>
        ContinuationError.hasCode(e, 'invalid'),
      );
    });

    it('purgeFinishedBefore deletes finished runs only, a dry run counts them; conversationsWith names the conversations of runs by status', async () => {
      await waitingRun('open');
      const ready = await waitingRun('answered');
      await queue.markReady(ready.interactionId, { action: 'accept', content: 'x' });
      await waitingRun('done');
      await queue.cancelConversation('done');
      expect((await queue.conversationsWith(['waiting', 'ready', 'failed'])).sort()).toEqual([
        'answered',
        'open',
      ]);
      expect(await queue.conversationsWith([])).toEqual([]);
      const future = new Date(Date.now() + 3_600_000);
      expect(await queue.purgeFinishedBefore(future, { dryRun: true })).toBe(1);
      expect((await queue.list()).length).toBe(3);
      expect(await queue.purgeFinishedBefore(new Date(Date.now() - 3_600_000))).toBe(0);
      expect(await queue.purgeFinishedBefore(future)).toBe(1);
      expect((await queue.list()).map((r) => r.conversationId).sort()).toEqual([
        'answered',
        'open',
      ]);
    });

    it('stopping a conversation cancels its open runs; a worker running one is refused', async () => {
      const a = await waitingRun('stop-me');
      const b = await waitingRun('stop-me');
      const other = await waitingRun('keep-me');
      await queue.markReady(b.interactionId, { action: 'accept', content: 'x' });
      const me = owner();
      await queue.claim({ owner: me, leaseMs: LEASE });
      expect(await queue.cancelConversation('stop-me')).toBe(2);
      expect((await queue.get(a.runId))?.status).toBe('cancelled');
      expect((await queue.get(other.runId))?.status).toBe('waiting');
      await expect(
        queue.finish(b.runId, me, { status: 'completed', messages: [reply] }),
      ).rejects.toSatisfy((e) => ContinuationError.hasCode(e, 'lease_lost'));
    });

    it('a claimed run whose continuation was resolved by another route comes without one', async () => {
      const { interactionId } = await waitingRun();
      await queue.markReady(interactionId, { action: 'accept', content: 'x' });
      await store.markResolved(interactionId);
      const claimed = await queue.claim({ owner: owner(), leaseMs: LEASE });
      expect(claimed?.run.interactionId).toBe(interactionId);
      expect(claimed?.suspension).toBeUndefined();
    });

    it('lists runs newest first, by conversation and by status; a run completed at once keeps its whole transcript', async () => {
      await waitingRun('a');
      await queue.create({
        runId: 'done-at-once',
        conversationId: 'b',
        status: 'completed',
        messages: [reply],
      });
      await db.execute(
        sql`update x_continuation.runs set created_at = now() + interval '1 second' where run_id = 'done-at-once'`,
      );
      expect((await queue.list()).map((r) => r.conversationId)).toEqual(['b', 'a']);
      expect((await queue.list({ conversationId: 'a' })).map((r) => r.status)).toEqual(['waiting']);
      expect((await queue.list({ status: 'completed' })).map((r) => r.runId)).toEqual([
        'done-at-once',
      ]);
      expect(await queue.transcript('done-at-once')).toEqual([reply]);
      expect(await queue.get('done-at-once')).toMatchObject({ meta: null, interactionId: null });
      expect((await queue.get('done-at-once'))?.finishedAt).toBeInstanceOf(Date);
      const [stored] = rowsOf(
        await db.execute(
          sql`select meta is null as no_meta from x_continuation.runs where run_id = 'done-at-once'`,
        ),
      );
      expect(stored?.no_meta).toBe(true);
      const many = await queue.getMany(['done-at-once', 'nope']);
      expect([...many.keys()]).toEqual(['done-at-once']);
    });

    it('the database failing is `unavailable`', async () => {
      const broken = new PostgresRunQueue(db);
      await db.execute(sql`alter table x_continuation.runs rename to runs_away`);
      try {
        await expect(broken.claim({ owner: owner(), leaseMs: LEASE })).rejects.toSatisfy((e) =>
          ContinuationError.hasCode(e, 'unavailable'),
        );
      } finally {
        await db.execute(sql`alter table x_continuation.runs_away rename to runs`);
      }
    });
  });
}
