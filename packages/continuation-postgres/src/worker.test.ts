import { randomUUID } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { ContinuationError } from '@x/continuation';
import type { Message } from '@x/wire';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type ContinuationDatabase,
  listenPglite,
  listenPostgresJs,
  migrate,
  PostgresContinuationStore,
  PostgresRunQueue,
  type RunJob,
  type RunQueueListen,
  RunWorker,
  type RunWorkerEvent,
  type RunWorkerOptions,
} from './index.js';
import { clearRuns, makeDue } from './testing/fixtures/run-rows.js';
import { waitingRun as fixture } from './testing/fixtures/waiting-run.js';

const reply: Message = { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] };
// Longer than any test: a run is claimed again only when a test says so.
const LONG = 600_000;

for (const t of await sqlTargets()) {
  describe.skipIf(t.skip)(`RunWorker (${t.kind})`, () => {
    let target: SqlTarget;
    let db: ContinuationDatabase;
    let queue: PostgresRunQueue;
    let listen: RunQueueListen;
    const started: RunWorker<unknown>[] = [];
    beforeAll(async () => {
      target = await t.open();
      db = target.db;
      await migrate(db);
      queue = new PostgresRunQueue(db, { synchronousClaim: t.kind === 'pglite' });
      listen =
        t.kind === 'pglite'
          ? listenPglite(target.client as PGlite)
          : listenPostgresJs(target.client as postgres.Sql);
    });
    afterAll(() => target?.close());
    beforeEach(async () => {
      await clearRuns(db);
    });
    afterEach(async () => {
      await Promise.all(started.splice(0).map((worker) => worker.stop()));
      // Every run and its queue row agree after each case (issue 53).
      expect(await queue.queueDrift()).toEqual([]);
    });

    /** A run waiting on a saved continuation; `ready` answers it. */
    async function waitingRun() {
      const run = await fixture(new PostgresContinuationStore(db), queue, { conversationId: 'c' });
      return {
        ...run,
        ready: () => queue.markReady(run.interactionId, { answer: 'yes' }),
      };
    }

    async function readyRun() {
      const run = await waitingRun();
      await run.ready();
      return run;
    }

    /** A worker with this test's queue and LISTEN, and its events as they come. */
    function worker<T>(options: Omit<RunWorkerOptions<T>, 'queue'>) {
      const events: RunWorkerEvent<T>[] = [];
      const waiters: Array<{ match: (e: RunWorkerEvent<T>) => boolean; done: () => void }> = [];
      const w = new RunWorker<T>({
        queue,
        listen,
        pollMs: LONG,
        ...options,
        onEvent: (event) => {
          events.push(event);
          for (const waiter of waiters.filter((x) => x.match(event))) waiter.done();
          options.onEvent?.(event);
        },
      });
      started.push(w as RunWorker<unknown>);
      /** Resolves at the first event (seen or to come) of `type` that `match` accepts. */
      const next = <K extends RunWorkerEvent<T>['type']>(
        type: K,
        match: (e: Extract<RunWorkerEvent<T>, { type: K }>) => boolean = () => true,
      ) =>
        new Promise<Extract<RunWorkerEvent<T>, { type: K }>>((resolve) => {
          const accepts = (e: RunWorkerEvent<T>) =>
            e.type === type && match(e as Extract<RunWorkerEvent<T>, { type: K }>);
          const seen = events.find(accepts);
          if (seen) resolve(seen as Extract<RunWorkerEvent<T>, { type: K }>);
          else
            waiters.push({
              match: accepts,
              done: () =>
                resolve(events.findLast(accepts) as Extract<RunWorkerEvent<T>, { type: K }>),
            });
        });
      return { worker: w, events, next };
    }

    const completing = async (job: RunJob) => {
      await job.complete([reply]);
      return job.run.runId;
    };

    it('claims a ready run, resumes it with its continuation and completes it under its lease', async () => {
      const { runId, suspension } = await readyRun();
      let seen: RunJob | undefined;
      const {
        worker: w,
        events,
        next,
      } = worker({
        resume: async (job) => {
          seen = job;
          return completing(job);
        },
      });
      const running = w.run();
      expect((await next('run-resumed')).result).toBe(runId);
      await w.stop();
      await running;
      expect(seen).toMatchObject({
        run: { runId, status: 'running', attempts: 1, input: { answer: 'yes' } },
        suspension,
        attempt: 1,
      });
      expect(seen?.owner).toMatch(/\/w1#\d+\./);
      expect(events.map((e) => e.type).filter((type) => type !== 'idle')).toEqual([
        'run-claimed',
        'run-resumed',
      ]);
      expect(await queue.get(runId)).toMatchObject({
        status: 'completed',
        leaseOwner: seen?.owner,
      });
      expect(await queue.transcript(runId)).toEqual([...(suspension.messages ?? []), reply]);
    });

    it('is woken by a released run and by the channels it is given, not only by its poll', async () => {
      const { runId } = await readyRun();
      const other = `other-${randomUUID()}`;
      await queue.claim({ owner: other, leaseMs: LONG });
      const waiting = await waitingRun();
      const { worker: w, next } = worker({ resume: completing, channels: ['x_test_answered'] });
      void w.run();
      // Idle, it says what others hold: the other worker's lease, until it expires in 10 minutes.
      const idle = await next('idle');
      expect(idle.leases).toEqual([expect.objectContaining({ runId, owner: other })]);
      await queue.release(runId, other);
      await next('run-resumed', (e) => e.result === runId);
      await waiting.ready();
      await db.execute(sql`select pg_notify('x_test_answered', '')`);
      await next('run-resumed', (e) => e.result === waiting.runId);
    });

    it('after a resumed run, sleeps until the next due time its claim saw, or a notification', async () => {
      const { runId } = await readyRun();
      // Due in a second, with no notification: only the claim's next due time finds it.
      const due = await fixture(new PostgresContinuationStore(db), queue, {
        conversationId: 'c',
        dueAt: new Date(Date.now() + 1_000),
      });
      const { worker: w, next } = worker({
        resume: async (job) => {
          if (job.run.runId === due.runId) {
            await job.finish({ status: 'cancelled', reason: 'due' });
            return job.run.runId;
          }
          return completing(job);
        },
      });
      void w.run();
      await next('run-resumed', (e) => e.result === runId);
      await next('run-resumed', (e) => e.result === due.runId);
      // Readied while the worker sleeps (its poll is 10 minutes): the notification wakes it.
      const answered = await readyRun();
      await next('run-resumed', (e) => e.result === answered.runId);
    });

    it('resumes up to its concurrency side by side, one claim per free slot', async () => {
      const runIds = [];
      for (let i = 0; i < 3; i++) runIds.push((await readyRun()).runId);
      let inFlight = 0;
      let most = 0;
      let open = () => {};
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      const { worker: w, next } = worker({
        concurrency: 2,
        resume: async (job) => {
          most = Math.max(most, ++inFlight);
          if (inFlight === 2) open();
          await gate;
          inFlight--;
          return completing(job);
        },
      });
      void w.run();
      for (const runId of runIds) await next('run-resumed', (e) => e.result === runId);
      expect(most).toBe(2);
      expect(await queue.list({ status: 'completed' })).toHaveLength(3);
    });

    it('renews the lease while the resume runs, so that nobody else can claim the run', async () => {
      const { runId } = await readyRun();
      const { worker: w, next } = worker({
        leaseMs: 2_000,
        renewEveryMs: 100,
        resume: async (job) => {
          const first = (await queue.get(runId))?.leaseExpiresAt?.getTime() ?? 0;
          while (((await queue.get(runId))?.leaseExpiresAt?.getTime() ?? 0) <= first) {
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          expect(await queue.claim({ owner: 'thief', leaseMs: LONG })).toBeUndefined();
          return completing(job);
        },
      });
      void w.run();
      await next('run-resumed');
      expect(await queue.get(runId)).toMatchObject({ status: 'completed', attempts: 1 });
    });

    it('reports a lease taken over, aborts the resume, and never finishes the other worker’s run', async () => {
      const { runId } = await readyRun();
      const thief = `thief-${randomUUID()}`;
      const { worker: w, next } = worker({
        leaseMs: 50,
        // Later than the lease's end: another worker takes the run over before the renewal.
        renewEveryMs: 500,
        resume: async (job) => {
          while (!(await queue.claim({ owner: thief, leaseMs: LONG }))) {
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          await new Promise((resolve) => job.signal.addEventListener('abort', resolve));
          await job.complete([reply]);
          return 'written';
        },
      });
      void w.run();
      const lost = await next('lease-lost');
      expect(lost.job.signal.aborted).toBe(true);
      expect(await queue.get(runId)).toMatchObject({
        status: 'running',
        leaseOwner: thief,
        attempts: 2,
        lostAttempts: 1,
      });
    });

    it('retries a failed attempt after a backoff and completes it on the next', async () => {
      const { runId } = await readyRun();
      const { worker: w, next } = worker({
        retry: { baseMs: 1 },
        resume: async (job) => {
          if (job.attempt === 1) throw new Error('the model is busy');
          return completing(job);
        },
      });
      void w.run();
      const retry = await next('retry-scheduled');
      expect(retry).toMatchObject({ reason: 'the model is busy', job: { attempt: 1 } });
      expect(retry.retryInMs).toBeLessThanOrEqual(1);
      await next('run-resumed');
      expect(await queue.get(runId)).toMatchObject({ status: 'completed', attempts: 2 });
    });

    it('fails a run when its attempts are used up, with the reason the app gives', async () => {
      const { runId } = await readyRun();
      const {
        worker: w,
        next,
        events,
      } = worker({
        retry: { baseMs: 1, maxAttempts: 2 },
        describeError: (error) => `model: ${(error as Error).message}`,
        resume: async () => {
          throw new Error('down');
        },
      });
      void w.run();
      const failed = await next('run-failed');
      expect(failed).toMatchObject({
        reason: 'model: down',
        attempts: { workerGone: 0, errors: 2 },
        gaveUp: false,
        job: { attempt: 2 },
      });
      expect(events.filter((e) => e.type === 'retry-scheduled')).toHaveLength(1);
      expect(await queue.get(runId)).toMatchObject({
        status: 'failed',
        attempts: 2,
        lastError: 'model: down',
      });
    });

    it("records a run's failure in the app's transaction with the app's own statement, or neither", async () => {
      await db.execute(
        sql`create table if not exists public.worker_failures (run_id text primary key, reason text)`,
      );
      await db.execute(sql`delete from public.worker_failures`);
      const kept = await readyRun();
      const refused = await readyRun();
      const { worker: w, next } = worker({
        resume: async () => {
          throw Object.assign(new Error('a tool this app lacks'), { retryable: false });
        },
        recordFailure: (job, failure, record) =>
          db.transaction(async (tx) => {
            await record(new PostgresRunQueue(tx as unknown as ContinuationDatabase));
            // The app's statement: refused for one run, so that its failure is rolled back.
            const reason = job.run.runId === refused.runId ? null : failure.reason;
            await tx.execute(
              sql`insert into public.worker_failures (run_id, reason) values (${job.run.runId}, ${reason})`,
            );
            if (reason === null) throw new Error('the app could not write its statement');
          }),
      });
      void w.run();
      await next('run-failed', (e) => e.job.run.runId === kept.runId);
      await next('error', (e) => String(e.error).includes('could not write its statement'));
      await w.stop();
      expect(await queue.get(kept.runId)).toMatchObject({
        status: 'failed',
        lastError: 'a tool this app lacks',
      });
      const rows = await db.execute(sql`select run_id, reason from public.worker_failures`);
      expect(Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows).toEqual([
        { run_id: kept.runId, reason: 'a tool this app lacks' },
      ]);
      // Neither was written for the other: its run is still held, to be claimed again.
      expect(await queue.get(refused.runId)).toMatchObject({ status: 'running', lastError: null });
      await db.execute(sql`drop table public.worker_failures`);
    });

    it('never retries an error marked retryable: false or refused by the policy', async () => {
      const marked = await readyRun();
      const refused = await readyRun();
      const {
        worker: w,
        next,
        events,
      } = worker({
        retry: { baseMs: 1, retryable: (error) => !(error instanceof TypeError) },
        resume: async (job) => {
          if (job.run.runId === marked.runId) {
            throw Object.assign(new Error('a tool this app lacks'), { retryable: false });
          }
          throw new TypeError('bad input');
        },
      });
      void w.run();
      await next('run-failed', (e) => e.job.run.runId === marked.runId);
      await next('run-failed', (e) => e.job.run.runId === refused.runId);
      expect(events.filter((e) => e.type === 'retry-scheduled')).toEqual([]);
      expect(await queue.get(marked.runId)).toMatchObject({
        status: 'failed',
        attempts: 1,
        lastError: 'a tool this app lacks',
      });
      expect(await queue.get(refused.runId)).toMatchObject({ status: 'failed', attempts: 1 });
    });

    it('gives a run up without resuming it when the attempts before the claim used up the limit', async () => {
      const { runId } = await readyRun();
      // A worker that claimed it and died: its lease ran out.
      await queue.claim({ owner: 'dead', leaseMs: 1 });
      await makeDue(db, runId);
      let resumed = 0;
      const { worker: w, next } = worker({
        retry: { maxAttempts: 1, limitName: 'MAX_ATTEMPTS' },
        resume: async (job) => {
          resumed++;
          return completing(job);
        },
      });
      void w.run();
      const failed = await next('run-failed');
      expect(failed).toMatchObject({
        gaveUp: true,
        attempts: { workerGone: 1, errors: 0 },
        reason:
          'gave up after 1 attempt (1 ended with the worker gone, 0 with an error), the limit (MAX_ATTEMPTS=1)',
      });
      expect(resumed).toBe(0);
      expect(await queue.get(runId)).toMatchObject({
        status: 'failed',
        attempts: 1,
        lostAttempts: 1,
      });
    });

    it('stops gracefully: claims nothing more, lets a resume finish within the grace', async () => {
      const first = await readyRun();
      let finish = () => {};
      const { worker: w, next } = worker({
        resume: async (job) => {
          await new Promise<void>((resolve) => {
            finish = resolve;
          });
          return completing(job);
        },
      });
      void w.run();
      await next('run-claimed');
      const second = await readyRun();
      const stopped = w.stop();
      finish();
      await stopped;
      expect(await queue.get(first.runId)).toMatchObject({ status: 'completed' });
      expect(await queue.get(second.runId)).toMatchObject({ status: 'ready', attempts: 0 });
    });

    it('at the end of the grace cuts the resume and releases its lease, so another worker takes over at once', async () => {
      const { runId } = await readyRun();
      const { worker: w, next } = worker({
        graceMs: 0,
        resume: async (job) => {
          await new Promise((_, reject) =>
            job.signal.addEventListener('abort', () => reject(job.signal.reason)),
          );
        },
      });
      void w.run();
      await next('run-claimed');
      await w.stop();
      await next('run-released');
      expect(await queue.get(runId)).toMatchObject({ status: 'ready', attempts: 0 });
      const successor = worker({ resume: completing });
      void successor.worker.run();
      expect(await successor.next('run-resumed')).toMatchObject({ job: { attempt: 1 } });
    });

    it('drains what is claimable now, each run once, and leaves a failed attempt for later', async () => {
      const good = await readyRun();
      const bad = await readyRun();
      const calls: string[] = [];
      const { worker: w } = worker({
        concurrency: 2,
        retry: { baseMs: 1 },
        resume: async (job) => {
          calls.push(job.run.runId);
          if (job.run.runId === bad.runId) throw new Error('no');
          return completing(job);
        },
      });
      await w.drain();
      expect(calls.sort()).toEqual([good.runId, bad.runId].sort());
      expect(await queue.get(good.runId)).toMatchObject({ status: 'completed' });
      expect(await queue.get(bad.runId)).toMatchObject({ status: 'ready', attempts: 1 });
    });

    it('drains at most `max` runs, across its slots', async () => {
      await readyRun();
      await readyRun();
      await readyRun();
      const { worker: w } = worker({ concurrency: 2, resume: completing });
      await w.drain(1);
      expect(await queue.list({ status: 'completed' })).toHaveLength(1);
      expect(await queue.list({ status: 'ready' })).toHaveLength(2);
    });

    it('reports a database that fails, waits, and goes on over the connection `reconnect` gives', async () => {
      const { runId } = await readyRun();
      // Nothing listens on port 1: every statement of this queue is refused.
      const client = postgres('postgres://postgres@127.0.0.1:1/none', {
        max: 1,
        connect_timeout: 2,
        onnotice: () => {},
      });
      const broken = new PostgresRunQueue(drizzle({ client }) as unknown as ContinuationDatabase);
      try {
        const refused = new RunWorker({ queue: broken, resume: completing });
        await expect(refused.drain()).rejects.toSatisfy((e) =>
          ContinuationError.hasCode(e, 'unavailable'),
        );
        const events: RunWorkerEvent<string>[] = [];
        const recovering = new RunWorker({
          queue: broken,
          pollMs: LONG,
          resume: completing,
          reconnect: async () => ({ queue, listen }),
          onEvent: (event) => events.push(event),
        });
        started.push(recovering as RunWorker<unknown>);
        void recovering.run();
        while (!events.some((e) => e.type === 'run-resumed')) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const error = events.find((e) => e.type === 'error');
        expect(error).toMatchObject({ error: expect.any(ContinuationError) });
        expect(await queue.get(runId)).toMatchObject({ status: 'completed' });
      } finally {
        await client.end({ timeout: 1 });
      }
    });

    it('reports a lease renewal the database refuses, and the resume goes on', async () => {
      const { runId } = await readyRun();
      // The queue's renewals fail as they would with the server away; its other writes work.
      class RenewalsRefused extends PostgresRunQueue {
        override renew(): Promise<boolean> {
          return Promise.reject(new ContinuationError('unavailable', 'connection refused'));
        }
      }
      const refusing = new RenewalsRefused(db, { synchronousClaim: t.kind === 'pglite' });
      const events: RunWorkerEvent<string>[] = [];
      const w = new RunWorker({
        queue: refusing,
        renewEveryMs: 30,
        resume: async (job) => {
          await new Promise((resolve) => setTimeout(resolve, 200));
          return completing(job);
        },
        onEvent: (event) => events.push(event),
      });
      await w.drain(1);
      const errors = events.filter((e) => e.type === 'error');
      expect(errors[0]).toMatchObject({ error: expect.any(ContinuationError), retryInMs: 30 });
      expect(await queue.get(runId)).toMatchObject({ status: 'completed' });
    });

    it('refuses a concurrency, lease or poll that is not a positive number, naming it', () => {
      for (const [options, field] of [
        [{ concurrency: 0 }, 'concurrency'],
        [{ concurrency: 1.5 }, 'concurrency'],
        [{ leaseMs: -1 }, 'leaseMs'],
        [{ pollMs: Number.NaN }, 'pollMs'],
        [{ retry: { maxAttempts: 0 } }, 'retry.maxAttempts'],
      ] as const) {
        expect(() => new RunWorker({ queue, resume: completing, ...options })).toThrow(
          expect.objectContaining({ code: 'invalid', field }),
        );
      }
    });
  });
}
