import { AskUserStore, type ResumeAnswer } from '@x/askuser';
import { kb, ratio } from './bench-continuation.js';
import type { Context, Server } from './context.js';
import { measure, timed } from './measure.js';

const answer: ResumeAnswer = { action: 'accept', content: 'yes, go ahead' };
const options = ['yes', 'no', 'later'];
const resumeContext = { model: 'scripted:bench', step: 3 };

/** insert vs a hand-written INSERT of the same row. */
export async function benchAskUserInsert(ctx: Context, server: Server): Promise<void> {
  const { sql } = server;
  const store = new AskUserStore(server.db);
  let i = 0;
  const stats = await measure(
    {
      floor: async () => {
        await sql`
          insert into aura.paused_states (token, conversation_id, kind, question, options, priority,
            tool_call_id, resume_context, proxied_from_child_id, proxied_tool_call_id)
          values (${`if-${i++}`}, ${'conv-insert'}, ${'ask_user'}, ${'Deploy now?'}, ${sql.json(options)},
            ${0}, ${'call_1'}, ${sql.json(resumeContext)}, ${null}, ${null})`;
      },
      subject: async () => {
        await store.insert({
          token: `is-${i++}`,
          conversationId: 'conv-insert',
          kind: 'ask_user',
          question: 'Deploy now?',
          options,
          toolCallId: 'call_1',
          resumeContext,
        });
      },
    },
    ctx.budget,
  );
  ctx.add({
    section: '@x/askuser',
    name: 'insert',
    goal: { kind: 'at-least', value: 0.8, label: '≥ 0.8' },
    ratio: ratio(stats.floor?.median, stats.subject?.median),
    ratioMeaning: 'floor/subject',
    subject: stats.subject,
    floor: stats.floor,
  });
}

/** markResumedBatch(1000) vs 1,000 × markResumed, each on 1,000 fresh pending rows. */
export async function benchAskUserBatch(ctx: Context, server: Server): Promise<void> {
  const { sql } = server;
  const store = new AskUserStore(server.db);
  const size = 1000;
  let round = 0;
  const fresh = async (): Promise<string[]> => {
    const prefix = `b${round++}-`;
    await sql`
      insert into aura.paused_states (token, conversation_id, kind, question, tool_call_id)
      select ${prefix} || lpad(g::text, 5, '0'), 'conv-batch-' || (g % 10), 'ask_user', 'Deploy?', 'call_' || g
      from generate_series(1, ${size}) g`;
    return Array.from({ length: size }, (_, g) => `${prefix}${String(g + 1).padStart(5, '0')}`);
  };
  const stats = await measure(
    {
      loop: async () => {
        const tokens = await fresh();
        return timed(async () => {
          for (const token of tokens) await store.markResumed(token, answer);
        });
      },
      batch: async () => {
        const tokens = await fresh();
        return timed(async () => {
          const n = await store.markResumedBatch(tokens.map((token) => ({ token, answer })));
          if (n !== size) throw new Error(`markResumedBatch resolved ${n} of ${size}`);
        });
      },
      // The least any one-statement batch can cost: a bare UPDATE of the same rows, with
      // no lock order, no all-or-nothing check and no per-token answers.
      bare: async () => {
        const tokens = await fresh();
        return timed(async () => {
          const rows = await sql`
            update aura.paused_states set resumed_at = now(), resumed_answer = ${sql.json(answer)}
            where token = any(${tokens}) and resumed_at is null`;
          if (rows.count !== size) throw new Error(`bare UPDATE resolved ${rows.count} of ${size}`);
        });
      },
    },
    { time: 1, iterations: ctx.quick ? 2 : 4, rounds: 1 },
  );
  const best = ratio(stats.loop?.median, stats.bare?.median);
  ctx.add({
    section: '@x/askuser',
    name: `markResumedBatch(${size}) vs ${size} × markResumed`,
    goal: { kind: 'at-least', value: 20, label: '≥ 20× faster' },
    ratio: ratio(stats.loop?.median, stats.batch?.median),
    ratioMeaning: 'loop/batch',
    subject: stats.batch,
    floor: stats.loop,
    extra: { bareUpdateMs: stats.bare?.median, bestRatio: best },
    note: `a bare UPDATE of the same ${size} rows takes ${stats.bare?.median.toFixed(1)} ms, so no one-statement batch can be more than ${best.toFixed(1)}× faster than this loop`,
  });
}

async function fill(server: Server, rows: number): Promise<void> {
  const { sql } = server;
  await sql`truncate aura.paused_states cascade`;
  // 10 % pending, 100 rows per conversation: 1,000,000 rows = 100,000 pending over 10,000.
  await sql`
    insert into aura.paused_states (token, conversation_id, kind, question, priority, tool_call_id,
      created_at, resumed_at, resumed_answer)
    select 'tok-' || g, 'conv-' || (g % ${Math.max(1, rows / 100)}), 'ask_user', 'Question ' || g,
      g % 3, 'call_' || g, now() - make_interval(secs => g),
      case when g % 10 = 0 then null else now() end,
      case when g % 10 = 0 then null else '{"action":"accept","content":"yes"}'::jsonb end
    from generate_series(1, ${rows}) g`;
  // Vacuumed as well: otherwise autovacuum starts on the fresh rows while the listing is timed.
  await sql`vacuum analyze aura.paused_states`;
}

/** listPendingAll(100) on a big table vs on a small one; prints the plan. */
export async function benchAskUserListing(ctx: Context, server: Server): Promise<void> {
  const store = new AskUserStore(server.db);
  const small = 1000;
  const big = ctx.quick ? 100_000 : 1_000_000;
  const list = async () => {
    const rows = await store.listPendingAll(100);
    if (rows.length !== 100) throw new Error(`listPendingAll returned ${rows.length} rows`);
  };
  ctx.log(`askuser: filling ${small} rows`);
  await fill(server, small);
  const atSmall = await measure({ small: list }, ctx.budget);
  ctx.log(`askuser: filling ${big.toLocaleString('en')} rows (generate_series)`);
  const started = performance.now();
  await fill(server, big);
  ctx.log(`askuser: filled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const atBig = await measure({ big: list }, ctx.budget);
  const plan = await server.sql.unsafe(
    `explain (analyze, buffers, costs off, timing off, summary off)
     select * from aura.paused_states where resumed_at is null
     order by priority desc, created_at asc, token asc limit 100`,
  );
  const planLines = plan.map((r) => String(r['QUERY PLAN']));
  ctx.log(`askuser: plan of listPendingAll(100) at ${big.toLocaleString('en')} rows:`);
  for (const line of planLines) ctx.log(`  ${line}`);
  const [size] = await server.sql`
    select pg_total_relation_size('aura.paused_states')::float8 as bytes`;
  ctx.add({
    section: '@x/askuser',
    name: `listPendingAll(100) at ${big.toLocaleString('en')} vs ${small.toLocaleString('en')} rows`,
    goal: { kind: 'at-most', value: 2, label: '≤ 2×' },
    ratio: ratio(atBig.big?.median, atSmall.small?.median),
    ratioMeaning: 'big/small',
    subject: atBig.big,
    floor: atSmall.small,
    extra: { rows: big, pending: big / 10, conversations: big / 100, plan: planLines },
    note: `table + indexes ${kb(Number(size?.bytes ?? 0))}; plan: ${planLines.find((l) => l.includes('Scan'))?.trim() ?? planLines[0] ?? ''}`,
  });
  await server.sql`truncate aura.paused_states cascade`;
}
