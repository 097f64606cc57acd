import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { createSuspension } from '@x/continuation';
import { rowsOf } from '@x/postgres-kit';
import { assistantMessage, userMessage } from '@x/wire';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ExecutiveDatabase,
  type ExecutiveStorage,
  MIGRATIONS_SCHEMA,
  migrate,
  outboxEvents,
  runEvent,
  sqlExecutiveStorage,
} from '../src/index.js';

let counter = 0;
/** A token of its own for each case: the cases share one database. */
const fresh = (what: string) => `${what}-${process.pid}-${++counter}`;

/** A waiting run's three writes: its question, its continuation and the run. */
async function writeWaitingRun(storage: ExecutiveStorage, tx: ExecutiveDatabase, token: string) {
  const conversationId = `c-${token}`;
  const assistant = assistantMessage({ type: 'tool_use', id: 'tu1', name: 'ask_user', input: {} });
  await storage.pauses(tx).insert({
    token,
    conversationId,
    kind: 'ask_user',
    question: 'Which city?',
    toolCallId: 'tu1',
    resumeContext: { run: `r-${token}` },
  });
  await storage.continuations(tx).save(
    createSuspension({
      interactionId: token,
      sessionId: conversationId,
      runId: `r-${token}`,
      toolUseId: 'tu1',
      assistant,
      messages: [userMessage('Plan a trip'), assistant],
    }),
  );
  await storage.runs(tx).create({
    runId: `r-${token}`,
    conversationId,
    status: 'waiting',
    interactionId: token,
  });
}

/**
 * Registers the SQL storage's tests on one target kind, split per kind into two files so
 * that vitest runs PGlite and the server side by side (one PGlite instance per file).
 */
export async function describeSqlStorageOn(kind: SqlTarget['kind']): Promise<void> {
  for (const spec of (await sqlTargets()).filter((t) => t.kind === kind)) {
    describe.skipIf(spec.skip)(`sqlExecutiveStorage on ${spec.kind}`, () => {
      let target: SqlTarget;
      let storage: ExecutiveStorage;
      beforeAll(async () => {
        target = await spec.open();
        await migrate(target.db);
        storage = sqlExecutiveStorage(target.db, { queue: { synchronousClaim: true } });
      });
      afterAll(() => target?.close());

      it('migrate is idempotent and keeps its table in its own schema', async () => {
        expect(await migrate(target.db)).toEqual({ repairedRuns: 0 });
        const [row] = rowsOf(
          await target.db.execute(
            sql`select to_regclass(${`${MIGRATIONS_SCHEMA}.gated_results`})::text as t`,
          ),
        );
        expect(row?.t).toBe('x_executive.gated_results');
      });

      it('writes a question, its continuation and its run in one transaction, or none', async () => {
        const kept = fresh('kept');
        await storage.transaction((tx) => writeWaitingRun(storage, tx, kept));
        expect((await storage.pauses().getByToken(kept)).question).toBe('Which city?');
        expect((await storage.continuations().load(kept)).runId).toBe(`r-${kept}`);
        expect((await storage.runs().get(`r-${kept}`))?.status).toBe('waiting');

        const lost = fresh('lost');
        await expect(
          storage.transaction(async (tx) => {
            await writeWaitingRun(storage, tx, lost);
            throw new Error('the flow failed after its writes');
          }),
        ).rejects.toThrow('the flow failed');
        await expect(storage.pauses().getByToken(lost)).rejects.toThrow();
        await expect(storage.continuations().load(lost)).rejects.toThrow();
        expect(await storage.runs().get(`r-${lost}`)).toBeUndefined();
      });

      it('records a gated result once: the first record stands', async () => {
        const token = fresh('gated');
        const results = storage.gatedResults();
        expect(await results.result(token)).toBeUndefined();
        const first = {
          token,
          tool: 'pay',
          arguments: { amount: 40 },
          edited: true,
          result: 'paid',
        };
        expect(await results.record(first)).toEqual(first);
        const again = await results.record({ ...first, edited: false, result: 'paid twice' });
        expect(again).toEqual(first);
        expect(await results.result(token)).toEqual(first);
      });

      it('records no gated result of a transaction that rolled back', async () => {
        const token = fresh('rolled');
        const record = { token, tool: 'pay', arguments: {}, edited: false, result: 'paid' };
        await expect(
          storage.transaction(async (tx) => {
            await storage.gatedResults(tx).record(record);
            throw new Error('lease lost');
          }),
        ).rejects.toThrow('lease lost');
        expect(await storage.gatedResults().result(token)).toBeUndefined();
      });

      it('writes notifications to the outbox in the event transaction', async () => {
        const eventId = fresh('evt');
        await storage.transaction(async (tx) => {
          await storage
            .notifications(tx)
            .enqueue([{ eventId, kind: 'run.completed', channel: 'webhook', payload: {} }]);
        });
        const listed = await storage.notifications().list();
        expect(listed.filter((n) => n.eventId === eventId).map((n) => n.channel)).toEqual([
          'webhook',
        ]);
      });

      it('outboxEvents writes an event once per routed channel, in its transaction', async () => {
        const events = outboxEvents(storage, {
          channels: (event) => (event.kind === 'run.failed' ? ['webhook', 'email'] : []),
          wants: (kind) => kind === 'run.failed',
        });
        expect(events.wants('run.completed')).toBe(false);
        const runId = fresh('run');
        const failed = runEvent('run.failed', { runId, conversationId: 'c' }, { error: 'boom' });
        await storage.transaction(async (tx) => {
          await events.record(tx, failed);
          await events.record(tx, runEvent('run.completed', { runId, conversationId: 'c' }));
        });
        await expect(
          storage.transaction(async (tx) => {
            await events.record(tx, failed);
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
        const written = (await storage.notifications().list()).filter(
          (n) => (n.payload as { data?: { runId?: string } }).data?.runId === runId,
        );
        expect(written.map((n) => [n.kind, n.channel]).sort()).toEqual([
          ['run.failed', 'email'],
          ['run.failed', 'webhook'],
        ]);
        expect(new Set(written.map((n) => n.eventId)).size).toBe(1);
        expect(written[0]?.payload).toMatchObject({ type: 'run.failed', data: { error: 'boom' } });
      });

      it('reads a snapshot and refuses a write in it', async () => {
        const token = fresh('snap');
        await storage.transaction((tx) => writeWaitingRun(storage, tx, token));
        const seen = await storage.snapshot((tx) => storage.runs(tx).get(`r-${token}`));
        expect(seen?.status).toBe('waiting');
        await expect(
          storage.snapshot((tx) => tx.execute(sql`delete from x_executive.gated_results`)),
        ).rejects.toThrow();
      });

      it('names one lease holder for its life, unless given one', async () => {
        const holder = await storage.leaseHolder();
        expect(Number.isInteger(holder)).toBe(true);
        expect(await storage.leaseHolder()).toBe(holder);
        const given = sqlExecutiveStorage(target.db, { leaseHolder: async () => 7 });
        expect(await given.leaseHolder()).toBe(7);
        expect(given.listen).toBeUndefined();
      });

      it.skipIf(spec.kind !== 'postgres')(
        'lockFor makes two transactions about one key run one after the other',
        async () => {
          const other = postgres(target.url ?? '', { max: 1, onnotice: () => {} });
          try {
            const second = sqlExecutiveStorage(
              drizzle({ client: other }) as unknown as ExecutiveDatabase,
            );
            const key = fresh('lock');
            const order: string[] = [];
            let release!: () => void;
            const held = new Promise<void>((resolve) => {
              release = resolve;
            });
            let locked!: () => void;
            const taken = new Promise<void>((resolve) => {
              locked = resolve;
            });
            const first = storage.transaction(async (tx) => {
              await storage.lockFor(tx, key);
              locked();
              await held;
              order.push('first commits');
            });
            await taken;
            const waiting = second.transaction(async (tx) => {
              await second.lockFor(tx, key);
              order.push('second locked');
            });
            await new Promise((resolve) => setTimeout(resolve, 200));
            order.push('first released');
            release();
            await Promise.all([first, waiting]);
            expect(order).toEqual(['first released', 'first commits', 'second locked']);
          } finally {
            await other.end({ timeout: 1 });
          }
        },
      );
    });
  }
}
