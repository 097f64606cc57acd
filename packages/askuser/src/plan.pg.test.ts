import { openServerTarget, type SqlTarget, serverForTests } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggedDb } from '../test/support.js';
import { AskUserStore, migrate } from './index.js';

const serverUrl = await serverForTests();

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe.skipIf(serverUrl === undefined)('query plans at 50,000 rows (server)', () => {
  let target: SqlTarget;

  /** Runs `call` through a logging store and EXPLAINs the one statement it sent. */
  async function planOf(call: (s: AskUserStore) => Promise<unknown>): Promise<PlanNode[]> {
    const logged = loggedDb(target);
    await call(new AskUserStore(logged.db));
    expect(logged.statements).toHaveLength(1);
    const client = target.client as postgres.Sql;
    const params = (logged.params[0] ?? []) as postgres.ParameterOrJSON<never>[];
    const text = await client.unsafe(`explain ${logged.statements[0]}`, params);
    console.log(text.map((r) => r['QUERY PLAN']).join('\n'));
    const [row] = await client.unsafe(`explain (format json) ${logged.statements[0]}`, params);
    const [explained] = (row?.['QUERY PLAN'] ?? []) as { Plan: PlanNode }[];
    if (explained === undefined) throw new Error('EXPLAIN returned no plan');
    return nodes(explained.Plan);
  }

  beforeAll(async () => {
    target = await openServerTarget(serverUrl ?? '');
    await migrate(target.db);
    // 50,000 pauses over 500 conversations; one in ten still pending.
    await target.db.execute(sql`
      insert into aura.paused_states
        (token, conversation_id, kind, question, tool_call_id, priority, created_at, resumed_at, resumed_answer)
      select 'tok-' || lpad(g::text, 6, '0'), 'conv-' || (g % 500), 'ask_user', 'q?', 'call-' || g, g % 3,
        now() - make_interval(secs => 50000 - g),
        case when g % 10 = 0 then null else now() - make_interval(secs => 50000 - g) end,
        case when g % 10 = 0 then null else '{"action":"accept","content":"ok"}'::jsonb end
      from generate_series(1, 50000) g`);
    await target.db.execute(sql`analyze aura.paused_states`);
  });
  afterAll(() => target?.close());

  it('listPendingAll reads the pending FIFO partial index in order, with no Sort', async () => {
    const plan = await planOf((s) => s.listPendingAll(100));
    expect(plan.map((n) => n['Node Type'])).not.toContain('Sort');
    expect(plan.map((n) => n['Node Type'])).not.toContain('Incremental Sort');
    expect(plan.some((n) => n['Index Name'] === 'paused_states_pending_fifo_idx')).toBe(true);
    const [first] = await new AskUserStore(target.db).listPendingAll(1);
    expect(first?.priority).toBe(2);
  });

  // Unbounded and small (10 rows here), so the planner may sort them after the index
  // lookup; what matters is that it touches only that conversation's pending rows.
  it('listPending(conversationId) reads only the per-conversation pending index', async () => {
    const plan = await planOf((s) => s.listPending('conv-20'));
    expect(plan.map((n) => n['Node Type'])).not.toContain('Seq Scan');
    expect(
      plan.some((n) => n['Index Name'] === 'paused_states_pending_conversation_fifo_idx'),
    ).toBe(true);
  });

  it('listRecent scans the created_at index backwards, with no Sort', async () => {
    const plan = await planOf((s) => s.listRecent(50));
    expect(plan.map((n) => n['Node Type'])).not.toContain('Sort');
    const scan = plan.find((n) => n['Index Name'] === 'paused_states_created_idx');
    expect(scan?.['Scan Direction']).toBe('Backward');
  });

  it('listAnswered reads the answered index in order, with no Sort', async () => {
    const plan = await planOf((s) => s.listAnswered({ limit: 100 }));
    expect(plan.map((n) => n['Node Type'])).not.toContain('Sort');
    expect(plan.some((n) => n['Index Name'] === 'paused_states_answered_idx')).toBe(true);
  });
});
