import { openServerTarget, type SqlTarget, serverForTests } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContinuationDatabase, migrate, PostgresRunQueue } from './index.js';
import { runWrites } from './run-statements.js';

const serverUrl = await serverForTests();

const seqScanOfRuns = /"Node Type":"Seq Scan"[^{}]*"Relation Name":"runs"/;

/** The plan of the claim statement itself, run in a transaction that is rolled back. */
async function claimPlan(target: SqlTarget): Promise<string> {
  const client = target.client as postgres.Sql;
  let plan = '';
  await client
    .begin(async (tx) => {
      const [row] = await tx.unsafe(
        `explain (analyze, buffers, format json) ${runWrites.claim.text}`,
        runWrites.claim.parameters({
          owner: 'explain',
          leaseMs: 1000,
          skip: [],
          holder: null,
          commit: 'on',
        }) as never[],
      );
      const [explained] = (row?.['QUERY PLAN'] ?? []) as { Plan: unknown }[];
      plan = JSON.stringify(explained?.Plan);
      throw new Error('rolled back');
    })
    .catch(() => {});
  return plan;
}

describe.skipIf(serverUrl === undefined)('the run queue’s plans at 100,000 runs (server)', () => {
  let target: SqlTarget;
  beforeAll(async () => {
    target = await openServerTarget(serverUrl ?? '');
    await migrate(target.db);
    // Half finished, half waiting on a person (a fifth of those until a deadline next week);
    // five ready.
    await target.db.execute(sql`
      insert into x_continuation.runs (run_id, conversation_id, status, interaction_id, claimable_at, finished_at)
      select 'run-' || g, 'conv-' || (g % 500),
        case when g <= 5 then 'ready' when g % 2 = 0 then 'completed' else 'waiting' end,
        'ask-' || g,
        case when g <= 5 then now() when g % 10 = 1 then now() + interval '7 days' end,
        case when g > 5 and g % 2 = 0 then now() else null end
      from generate_series(1, 100000) g`);
    await target.db.execute(sql`
      insert into x_continuation.run_queue (run_id, claimable_at, leased)
      select run_id, claimable_at, false from x_continuation.runs where claimable_at is not null`);
    await target.db.execute(sql`analyze x_continuation.run_queue`);
    await target.db.execute(sql`analyze x_continuation.runs`);
  });
  afterAll(() => target?.close());

  it('reads only the queue’s index of claimable runs, whatever else the table holds', async () => {
    const plan = await claimPlan(target);
    expect(plan).toContain('"Index Name":"run_queue_claimable_idx"');
    expect(plan).not.toMatch(seqScanOfRuns);
    // A handful of buffers, not thousands: the finished and waiting runs are never read.
    const buffers = [...plan.matchAll(/"Shared Hit Blocks":(\d+)/g)].map((m) => Number(m[1]));
    expect(Math.max(...buffers)).toBeLessThan(50);
    const queue = new PostgresRunQueue(target.db);
    const claimed = await queue.claim({ owner: 'w', leaseMs: 60_000 });
    expect(claimed?.run.runId).toMatch(/^run-[1-5]$/);
    for (let i = 0; i < 4; i++) await queue.claim({ owner: `w${i}`, leaseMs: 60_000 });
    // Nothing is due: the leases' holders are looked at through the queue, never the runs.
    const idle = await claimPlan(target);
    expect(idle).not.toMatch(seqScanOfRuns);
    expect(await queue.claim({ owner: 'w', leaseMs: 60_000 })).toBeUndefined();
  });

  it('plans markReady once per connection: its generic plan finds the waiting run by its index', async () => {
    // One connection, so that every call runs the same prepared statement.
    const client = postgres(target.url ?? '', { max: 1, onnotice: () => {} });
    try {
      const queue = new PostgresRunQueue(drizzle({ client }) as unknown as ContinuationDatabase);
      for (let g = 7; g < 40; g += 2) {
        const ready = await queue.markReady(`ask-${g}`, { action: 'accept', content: 'yes' });
        expect(ready?.runId).toBe(`run-${g}`);
      }
      const plans = await client<{ generic: number; custom: number }[]>`
        select generic_plans::int as generic, custom_plans::int as custom
        from pg_prepared_statements
        where statement like 'with held as %' and statement like '%set status = ''ready'', input = $2%'`;
      // PostgreSQL plans the first five calls for their values, then keeps the generic plan
      // unless it is costlier.
      expect(plans).toEqual([{ generic: 12, custom: 5 }]);
    } finally {
      await client.end({ timeout: 5 });
    }
  });
});

describe.skipIf(serverUrl === undefined)(
  'the claim’s plan when the queue grew unseen (server)',
  () => {
    let target: SqlTarget;
    beforeAll(async () => {
      target = await openServerTarget(serverUrl ?? '');
      await migrate(target.db);
      // 5,000 runs due at the same time (their questions' deadline), queued after the queue's
      // statistics were taken when it was empty: no analyze of them yet.
      await target.db.execute(sql`analyze x_continuation.run_queue`);
      await target.db.execute(sql`
      insert into x_continuation.runs (run_id, conversation_id, status, interaction_id, claimable_at, deadline_at)
      select 'due-' || g, 'conv-' || (g % 100), 'waiting', 'ask-' || g, now(), now()
      from generate_series(1, 5000) g`);
      await target.db.execute(sql`
      insert into x_continuation.run_queue (run_id, claimable_at, leased)
      select run_id, claimable_at, false from x_continuation.runs`);
    });
    afterAll(() => target?.close());

    it('walks the queue’s index in order instead of sorting every due run at each claim', async () => {
      const plan = await claimPlan(target);
      expect(plan).toContain('"Index Name":"run_queue_claimable_idx"');
      expect(plan).not.toContain('"Node Type":"Sort"');
      const buffers = [...plan.matchAll(/"Shared Hit Blocks":(\d+)/g)].map((m) => Number(m[1]));
      expect(Math.max(...buffers)).toBeLessThan(50);
    });
  },
);
