import { randomUUID } from 'node:crypto';
import { ContinuationError } from '@x/continuation';
import { type ContinuationDatabase, migrate, PostgresRunQueue } from '@x/continuation-postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import fc from 'fast-check';
import type postgres from 'postgres';
import { knob } from '../knobs.js';
import { sleep } from '../proc.js';
import type { Tally } from '../report.js';
import { client, createDatabase } from '../server.js';
import { property } from './hostile.js';

/** Random schedules of the run queue's writes (the issue asks for a count, printed). */
const INTERLEAVINGS = knob('RELIABILITY_QUEUE_INTERLEAVINGS', 200, 25);
/** Connections writing at once, each running its own list of writes. */
const LANES = 3;
/** SQLSTATE deadlock_detected. */
const DEADLOCK = '40P01';
/** Runs each schedule writes to, so that the lanes meet on them. */
const RUNS = 3;

/** One write of the queue, on one of the schedule's runs. */
type Write =
  | { kind: 'claim'; leaseMs: number }
  | { kind: 'renew' | 'release' | 'giveUp' | 'retry' | 'cancel'; run: number; leaseMs: number }
  | { kind: 'markReady' | 'markReadyMany'; run: number; leaseMs: number }
  | { kind: 'wait'; run: number; leaseMs: number; deadlineInMs: number | undefined }
  | { kind: 'end'; run: number; leaseMs: number; how: 'completed' | 'cancelled' | 'failed' }
  | { kind: 'complete'; run: number; leaseMs: number }
  | { kind: 'fail'; run: number; leaseMs: number; retryInMs: number | undefined }
  | { kind: 'purge' };

/** A write alone, or two in one transaction that holds the first's rows `holdMs` longer. */
type Step = { write: Write } | { held: [Write, Write]; holdMs: number };

const run = fc.integer({ min: 0, max: RUNS - 1 });
// Short leases expire within a schedule, so that claims also take runs over.
const leaseMs = fc.constantFrom(5, 40, 60_000);
// Weighted so that two writes of one run that both succeed (a claim, then renewals while
// another holds it) are common: refused writes cannot leave anything behind.
const write: fc.Arbitrary<Write> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('claim' as const), leaseMs }) },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('renew' as const), run, leaseMs }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom('markReady' as const, 'markReadyMany' as const),
      run,
      leaseMs,
    }),
  },
  fc.record({
    kind: fc.constantFrom('release', 'giveUp', 'retry', 'cancel'),
    run,
    leaseMs,
  }),
  fc.record({
    kind: fc.constant('wait' as const),
    run,
    leaseMs,
    deadlineInMs: fc.option(fc.constantFrom(0, 30, 3_600_000), { nil: undefined }),
  }),
  fc.record({
    kind: fc.constant('end' as const),
    run,
    leaseMs,
    how: fc.constantFrom('completed', 'cancelled', 'failed'),
  }),
  fc.record({ kind: fc.constant('complete' as const), run, leaseMs }),
  fc.record({
    kind: fc.constant('fail' as const),
    run,
    leaseMs,
    retryInMs: fc.option(fc.constantFrom(0, 20), { nil: undefined }),
  }),
  fc.record({ kind: fc.constant('purge' as const) }),
);
const step: fc.Arbitrary<Step> = fc.oneof(
  write.map((w) => ({ write: w })),
  fc.record({ held: fc.tuple(write, write), holdMs: fc.integer({ min: 0, max: 50 }) }),
);
const schedule = fc.array(fc.array(step, { minLength: 4, maxLength: 12 }), {
  minLength: LANES,
  maxLength: LANES,
});

/** What the lanes of one schedule know of its runs: their question and their last owner. */
interface Runs {
  ids: string[];
  conversations: string[];
  interactions: string[];
  owners: Map<string, string>;
}

/**
 * Lanes on connections of their own run random writes of the run queue (claim, renew, release,
 * markReady and its batch form, each form of finish, complete, fail, giveUp, retry, cancel,
 * purge) on a few runs at once, some inside transactions that hold a run while the others
 * wait for it. After each schedule every run and its queue row agree (`queueDrift()`), and
 * every refused write was refused with a `ContinuationError`.
 */
export async function queueInterleavings(tally: Tally): Promise<void> {
  const database = await createDatabase();
  const clients = Array.from({ length: LANES + 1 }, () => client(database.url, 1));
  const dbs = clients.map((sql) => drizzle({ client: sql }));
  try {
    await migrate(dbs[0] as ContinuationDatabase);
    const checker = new PostgresRunQueue(dbs[LANES] as ContinuationDatabase);
    let held = 0;
    let refused = 0;
    let deadlocks = 0;
    let rolledBack = 0;
    let writes = 0;
    await property(
      tally,
      'run queue interleavings',
      schedule,
      async (lanes) => {
        const runs = await createRuns(checker);
        const perform = async (queue: PostgresRunQueue, w: Write) => {
          writes++;
          try {
            await apply(queue, w, runs);
          } catch (error) {
            if (!ContinuationError.is(error)) throw error;
            refused++;
            if (error.sqlState === DEADLOCK) deadlocks++;
          }
        };
        await Promise.all(
          lanes.map(async (steps, lane) => {
            const db = dbs[lane] as ContinuationDatabase;
            const queue = new PostgresRunQueue(db);
            for (const s of steps) {
              if ('write' in s) {
                await perform(queue, s.write);
                continue;
              }
              held++;
              try {
                await db.transaction(async (tx) => {
                  const inTx = new PostgresRunQueue(tx);
                  await perform(inTx, s.held[0]);
                  await sleep(s.holdMs);
                  await perform(inTx, s.held[1]);
                });
              } catch (error) {
                // Two transactions that each hold a run and then write the other's deadlock:
                // the server rolls one back, which the driver rethrows at its end.
                if ((error as { code?: unknown })?.code !== DEADLOCK) throw error;
                rolledBack++;
              }
            }
          }),
        );
        tally.cases++;
        const drift = await checker.queueDrift();
        if (drift.length > 0) {
          throw new Error(
            `the run queue drifted from its runs after ${JSON.stringify(lanes)}: ${JSON.stringify(drift)}`,
          );
        }
        const sql = clients[LANES] as postgres.Sql;
        await sql`delete from x_continuation.run_queue`;
        await sql`delete from x_continuation.runs`;
      },
      INTERLEAVINGS,
    );
    tally.note(
      `${tally.cases} interleavings of ${LANES} connections on ${RUNS} runs: ${writes} writes (${held} transactions holding a run while others wrote it, ${refused} writes refused with a ContinuationError, ${deadlocks} of them for a deadlock; ${rolledBack} transactions rolled back for it); queueDrift() empty after each`,
    );
  } finally {
    await Promise.all(clients.map((sql) => sql.end({ timeout: 5 })));
    await database.drop();
  }
}

/** The schedule's runs: waiting on a question, one of them due at once. */
async function createRuns(queue: PostgresRunQueue): Promise<Runs> {
  const runs: Runs = { ids: [], conversations: [], interactions: [], owners: new Map() };
  for (let i = 0; i < RUNS; i++) {
    const runId = randomUUID();
    const conversationId = `c-${runId}`;
    const interactionId = `ask-${randomUUID()}`;
    await queue.create({
      runId,
      conversationId,
      status: 'waiting',
      interactionId,
      ...(i === 0 ? { deadlineAt: new Date() } : {}),
    });
    runs.ids.push(runId);
    runs.conversations.push(conversationId);
    runs.interactions.push(interactionId);
  }
  return runs;
}

/** Applies `w` as a worker or an operator would, with the run's last known owner. */
async function apply(queue: PostgresRunQueue, w: Write, runs: Runs): Promise<void> {
  if (w.kind === 'claim') {
    const claimed = await queue.claim({ owner: `w-${randomUUID()}`, leaseMs: w.leaseMs });
    if (claimed) runs.owners.set(claimed.run.runId, claimed.run.leaseOwner ?? '');
    return;
  }
  if (w.kind === 'purge') {
    await queue.purgeFinishedBefore(new Date());
    return;
  }
  const runId = runs.ids[w.run] ?? '';
  const owner = runs.owners.get(runId) ?? 'nobody';
  const interactionId = runs.interactions[w.run] ?? '';
  switch (w.kind) {
    case 'renew':
      await queue.renew(runId, owner, w.leaseMs);
      return;
    case 'release':
      await queue.release(runId, owner);
      return;
    case 'giveUp':
      await queue.giveUp(runId, owner, 'gave up');
      return;
    case 'retry':
      await queue.retry(runId);
      return;
    case 'cancel':
      await queue.cancelConversation(runs.conversations[w.run] ?? '');
      return;
    case 'markReady':
      await queue.markReady(interactionId, { action: 'accept', content: 'yes' });
      return;
    case 'markReadyMany':
      await queue.markReadyMany(
        runs.interactions.map((id) => ({ interactionId: id, input: { action: 'accept' } })),
      );
      return;
    case 'wait': {
      const next = `ask-${randomUUID()}`;
      await queue.finish(runId, owner, {
        status: 'waiting',
        interactionId: next,
        ...(w.deadlineInMs === undefined
          ? {}
          : { deadlineAt: new Date(Date.now() + w.deadlineInMs) }),
      });
      runs.interactions[w.run] = next;
      return;
    }
    case 'end':
      await queue.finish(
        runId,
        owner,
        w.how === 'completed'
          ? { status: 'completed', messages: [] }
          : w.how === 'cancelled'
            ? { status: 'cancelled', reason: 'stopped' }
            : { status: 'failed', error: 'broke' },
      );
      return;
    case 'complete':
      await queue.complete(runId, owner, []);
      return;
    case 'fail':
      await queue.fail(runId, owner, 'broke', w.retryInMs);
      return;
  }
}
