// The rows of "human time": what a quorum approval costs, and how fast deadlines are applied.
import { AskUserStore, migrate as migrateAskUser, type ResumeAnswer } from '@x/askuser';
import { migrate as migrateRuns, PostgresRunQueue, RunWorker } from '@x/continuation-postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { ratio } from './bench-continuation.js';
import type { Context, Db, Server } from './context.js';
import { measure, timed } from './measure.js';

const section = 'audit';
const yes: ResumeAnswer = { action: 'accept', content: 'approved' };
const FIVE = ['ada', 'bob', 'cy', 'dee', 'eve'];

let made = 0;
async function ask(store: AskUserStore, quorum: boolean): Promise<string> {
  const token = `hq-${made++}`;
  await store.insert({
    token,
    conversationId: 'conv-quorum',
    kind: 'approve',
    question: 'Approve: pay invoice 42?',
    toolCallId: `call_${token}`,
    audience: { names: FIVE },
    ...(quorum ? { quorum: { approvals: 3 } } : {}),
  });
  return token;
}

/**
 * The answer that completes a 3-of-5 quorum (the two approvals before it recorded first)
 * vs the single answer of a question without one, both by an operator of its audience.
 */
export async function benchQuorumAnswer(ctx: Context, server: Server): Promise<void> {
  const store = new AskUserStore(server.db);
  const as = (name: string) => ({ identity: { name } });
  const stats = await measure(
    {
      single: async () => {
        const token = await ask(store, false);
        return timed(() => store.markResumed(token, yes, as('ada')));
      },
      quorum: async () => {
        const token = await ask(store, true);
        await store.markResumed(token, yes, as('ada'));
        await store.markResumed(token, yes, as('bob'));
        return timed(() => store.markResumed(token, yes, as('cy')));
      },
    },
    ctx.budget,
  );
  ctx.add({
    section,
    name: 'answer of a 3-of-5 quorum approval vs a single answer (PostgreSQL)',
    goal: { kind: 'at-most', value: 1.5, label: '≤ 1.5×' },
    ratio: ratio(stats.quorum?.median, stats.single?.median),
    ratioMeaning: 'quorum/single',
    subject: stats.quorum,
    floor: stats.single,
  });
}

/**
 * 10,000 waiting runs whose questions reach their deadline in the same second, applied by
 * two run-queue workers (each its own pool, as two processes would be): the time from the
 * deadline until every one is expired and its run finished, and that each was applied once.
 */
export async function benchDeadlines(ctx: Context, server: Server): Promise<void> {
  const n = ctx.quick ? 1_000 : 10_000;
  await migrateAskUser(server.db);
  await migrateRuns(server.db);
  // Only these runs: the answer rows before leave ready runs whose questions are gone, and the
  // workers would spend the row's time failing and retrying them.
  await server.sql`truncate x_continuation.run_queue, x_continuation.runs`;
  const at = new Date(Date.now() + 3_000);
  const atText = at.toISOString();
  await server.sql`insert into aura.paused_states (token, conversation_id, kind, question, tool_call_id, deadline_at, deadline_answer)
    select 'dl-' || g, 'conv-dl-' || (g % 100), 'approve', 'Approve?', 'call-' || g, ${atText}::timestamptz, '{"action":"decline","content":""}'::jsonb
    from generate_series(1, ${n}) g`;
  await server.sql`insert into x_continuation.runs (run_id, conversation_id, status, interaction_id, claimable_at, deadline_at)
    select 'dl-run-' || g, 'conv-dl-' || (g % 100), 'waiting', 'dl-' || g, ${atText}::timestamptz, ${atText}::timestamptz
    from generate_series(1, ${n}) g`;
  // A run claimable at its deadline has its row in the claim order too, as create writes it.
  await server.sql`insert into x_continuation.run_queue (run_id, claimable_at, leased)
    select run_id, claimable_at, false from x_continuation.runs where run_id like 'dl-run-%'`;
  let applied = 0;
  const clients = [0, 1].map(() => postgres(server.url, { max: 5, onnotice: () => {} }));
  try {
    const workers = clients.map((client) => {
      const db = drizzle({ client }) as unknown as Db;
      const store = new AskUserStore(db);
      return new RunWorker({
        queue: new PostgresRunQueue(db),
        concurrency: 4,
        resume: async (job) => {
          const expired = await store.expire(job.run.interactionId ?? '');
          if (expired?.expiredAt) applied++;
          await job.finish({ status: 'cancelled', reason: 'expired' });
        },
      });
    });
    await new Promise((r) => setTimeout(r, Math.max(0, at.getTime() - Date.now())));
    const started = performance.now();
    await Promise.all(workers.map((w) => w.drain()));
    const ms = performance.now() - started;
    const [row] = await server.sql`select
      (select count(*)::int from aura.paused_states where token like 'dl-%' and expired_at is not null) as expired,
      (select count(*)::int from x_continuation.runs where run_id like 'dl-run-%' and status = 'cancelled' and attempts = 1) as once`;
    const once = row?.expired === n && row?.once === n && applied === n;
    ctx.add({
      section,
      name: `${n.toLocaleString()} questions reaching their deadline in the same second: time until all are applied, 2 workers`,
      goal: { kind: 'info', label: 'printed; each exactly once' },
      ratioMeaning: 'ms',
      ratio: ms,
      extra: { expired: row?.expired, finishedOnce: row?.once, applied },
      note: `${(ms / 1000).toFixed(1)} s for ${n.toLocaleString()} (${Math.round(n / (ms / 1000))}/s); ${once ? 'each applied exactly once' : `NOT each once: ${applied} applied, ${row?.expired} expired, ${row?.once} finished in one attempt`}`,
    });
  } finally {
    await Promise.all(clients.map((c) => c.end({ timeout: 5 })));
  }
}
