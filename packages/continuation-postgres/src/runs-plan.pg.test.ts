import { openServerTarget, type SqlTarget, serverForTests } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContinuationDatabase, migrate, PostgresRunQueue } from './index.js';

const serverUrl = await serverForTests();

describe.skipIf(serverUrl === undefined)('the run queue’s plans at 100,000 runs (server)', () => {
  let target: SqlTarget;
  beforeAll(async () => {
    target = await openServerTarget(serverUrl ?? '');
    await migrate(target.db);
    // Half finished, half waiting on a person; five ready.
    await target.db.execute(sql`
      insert into x_continuation.runs (run_id, conversation_id, status, interaction_id, due_at, finished_at)
      select 'run-' || g, 'conv-' || (g % 500),
        case when g <= 5 then 'ready' when g % 2 = 0 then 'completed' else 'waiting' end,
        'ask-' || g,
        case when g <= 5 then now() else null end,
        case when g > 5 and g % 2 = 0 then now() else null end
      from generate_series(1, 100000) g`);
    await target.db.execute(sql`analyze x_continuation.runs`);
  });
  afterAll(() => target?.close());

  it('reads only the partial index of claimable runs, whatever else the table holds', async () => {
    const client = target.client as postgres.Sql;
    const [row] = await client.unsafe(`explain (analyze, buffers, format json)
      select run_id from x_continuation.runs where status in ('ready', 'running', 'waiting') and due_at is not null
        and (due_at <= now() or (status = 'running' and lease_holder is not null and lease_holder is distinct from null::integer
          and pg_try_advisory_xact_lock_shared(1920298611, lease_holder)))
      order by due_at, run_id limit 1 for update skip locked`);
    const [explained] = (row?.['QUERY PLAN'] ?? []) as { Plan: unknown }[];
    const plan = JSON.stringify(explained?.Plan);
    expect(plan).toContain('"Index Name":"runs_claimable_idx"');
    expect(plan).not.toContain('"Node Type":"Seq Scan"');
    // Since the index also holds waiting runs with a deadline, the planner may sort the few
    // claimable rows it found through the index instead of reading them in order: the buffer
    // bound below is what keeps the finished and waiting runs unread.
    // A handful of buffers, not thousands: the finished and waiting runs are never read.
    const buffers = [...plan.matchAll(/"Shared Hit Blocks":(\d+)/g)].map((m) => Number(m[1]));
    expect(Math.max(...buffers)).toBeLessThan(50);
    const claimed = await new PostgresRunQueue(target.db).claim({ owner: 'w', leaseMs: 1000 });
    expect(claimed?.run.runId).toMatch(/^run-[1-5]$/);
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
        where statement like 'update %' and statement like '%set "status" = $1, "input" = $2%'`;
      // PostgreSQL plans the first five calls for their values, then keeps the generic plan
      // unless it is costlier: with the status bound as a value it was planned at every call.
      expect(plans).toEqual([{ generic: 12, custom: 5 }]);
    } finally {
      await client.end({ timeout: 5 });
    }
  });
});
