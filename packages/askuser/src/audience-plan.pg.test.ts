import { openServerTarget, type SqlTarget, serverForTests } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggedDb } from '../test/support.js';
import { AskUserStore, type Identity, migrate } from './index.js';

const serverUrl = await serverForTests();

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

const operator: Identity = { name: 'op-7', roles: ['operator', 'team-7'] };

describe.skipIf(serverUrl === undefined)(
  'listAnswerable at 100,000 questions across 50 audiences (server)',
  () => {
    let target: SqlTarget;

    /** Pending questions `from`..`to`: a tenth open to anyone, the rest for one of 50 teams. */
    async function fill(from: number, to: number): Promise<void> {
      await target.db.execute(sql`
      insert into aura.paused_states (token, conversation_id, kind, question, tool_call_id, priority, created_at, audience_roles)
      select 'tok-' || lpad(g::text, 6, '0'), 'conv-' || (g % 500), 'approval', 'q?', 'call-' || g, g % 3,
        now() - make_interval(secs => 200000 - g),
        case when g % 10 = 0 then '{}'::text[] else array['team-' || (g % 50)] end
      from generate_series(${from}::int, ${to}::int) g`);
      await target.db.execute(sql`analyze aura.paused_states`);
      await target.db.execute(sql`analyze aura.pending_audience`);
    }

    /** The median time of `listAnswerable(operator, 100)`, in ms. */
    async function median(): Promise<number> {
      const store = new AskUserStore(target.db);
      const times: number[] = [];
      for (let i = 0; i < 15; i++) {
        const start = performance.now();
        await store.listAnswerable(operator, 100);
        times.push(performance.now() - start);
      }
      return times.sort((a, b) => a - b)[7] ?? Number.NaN;
    }

    beforeAll(async () => {
      target = await openServerTarget(serverUrl ?? '');
      await migrate(target.db);
    });
    afterAll(() => target?.close());

    it('reads the ordered pending_audience index per key and the pending FIFO for anyone, never scans, and stays flat from 1,000 to 100,000', async () => {
      await fill(1, 1000);
      const small = await median();
      await fill(1001, 100_000);
      const large = await median();
      console.log(
        `listAnswerable(100) for one operator: ${small.toFixed(2)} ms at 1,000 questions, ${large.toFixed(2)} ms at 100,000 (${(large / small).toFixed(2)}x)`,
      );

      const logged = loggedDb(target);
      const listed = await new AskUserStore(logged.db).listAnswerable(operator, 100);
      expect(listed).toHaveLength(100);
      expect(
        listed.every((p) => p.audience.roles.length === 0 || p.audience.roles[0] === 'team-7'),
      ).toBe(true);
      const client = target.client as postgres.Sql;
      const params = (logged.params[0] ?? []) as postgres.ParameterOrJSON<never>[];
      const text = await client.unsafe(`explain ${logged.statements[0]}`, params);
      console.log(text.map((r) => r['QUERY PLAN']).join('\n'));
      const [row] = await client.unsafe(`explain (format json) ${logged.statements[0]}`, params);
      const [explained] = (row?.['QUERY PLAN'] ?? []) as { Plan: PlanNode }[];
      const plan = nodes(explained?.Plan ?? { 'Node Type': 'none' });
      expect(plan.some((n) => n['Index Name'] === 'pending_audience_fifo_idx')).toBe(true);
      // Questions open to anyone have no pending_audience row: their range of the pending FIFO.
      expect(plan.some((n) => n['Index Name'] === 'paused_states_pending_fifo_idx')).toBe(true);
      expect(
        plan.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']),
      ).toEqual([]);
    }, 180_000);
  },
);
