// The rows of "approvals a team can trust": what the audit log and the audience check cost.
import {
  AskUserStore,
  appendAuditEvent,
  auditHead,
  type ResumeAnswer,
  verifyAudit,
} from '@x/askuser';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { ratio } from './bench-continuation.js';
import type { Context, Db, Server } from './context.js';
import { measure, statsOf, timed } from './measure.js';

/** The audit key of the bench's stores. */
export const KEY = 'the bench audit key, 32 bytes ok';
const answer: ResumeAnswer = { action: 'accept', content: 'approved' };
const bob = { name: 'bob', roles: ['operator', 'finance'] };
const section = 'audit';

let made = 0;
/** Inserts `n` pending questions of conversation `conversation` for role finance through `store`; their tokens. */
export async function ask(store: AskUserStore, conversation: string, n: number): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < n; i++) {
    const token = `aq-${made++}`;
    await store.insert({
      token,
      conversationId: conversation,
      kind: 'approve',
      question: 'Approve: pay invoice 42?',
      toolCallId: `call_${token}`,
      audience: { roles: ['finance'] },
    });
    tokens.push(token);
  }
  return tokens;
}

/**
 * The store's answer alone with the audit log and bob's audience check vs a lone autocommit
 * UPDATE: information beside the row (bench-audit-runner.ts), which compares the
 * answer as the runner gives it, in one transaction with the run it readies.
 */
export async function benchAuditedAnswer(ctx: Context, server: Server): Promise<void> {
  const plain = new AskUserStore(server.db);
  const audited = new AskUserStore(server.db, { audit: { key: KEY } });
  const stats = await measure(
    {
      plain: async () => {
        const [token] = await ask(plain, 'conv-plain', 1);
        return timed(() => plain.markResumed(token as string, answer));
      },
      audited: async () => {
        const [token] = await ask(audited, 'conv-audited', 1);
        return timed(() =>
          audited.markResumed(token as string, answer, {
            identity: bob,
            signedInWith: 'key',
            channel: 'api',
          }),
        );
      },
    },
    ctx.budget,
  );
  ctx.add({
    section,
    name: 'the store’s answer alone with audit and audience check vs a lone autocommit UPDATE, information (PostgreSQL)',
    goal: {
      kind: 'info',
      label:
        'printed (the issue’s row compares the runner’s answer, one transaction with markReady)',
    },
    ratio: ratio(stats.audited?.median, stats.plain?.median),
    ratioMeaning: 'audited/plain',
    subject: stats.audited,
    floor: stats.plain,
  });
}

/** Answers per second of `clients` clients, each answering its own conversation's questions. */
async function throughput(db: Db, audit: boolean, clients: number, each: number): Promise<number> {
  const store = new AskUserStore(db, audit ? { audit: { key: KEY } } : {});
  const tokens = await Promise.all(
    Array.from({ length: clients }, (_, c) => ask(store, `conv-t${made}-${c}`, each)),
  );
  const started = performance.now();
  await Promise.all(
    tokens.map(async (mine) => {
      for (const token of mine) {
        await store.markResumed(token, answer, audit ? { identity: bob, channel: 'api' } : {});
      }
    }),
  );
  return (clients * each) / ((performance.now() - started) / 1000);
}

/**
 * 32 clients answering different questions at once through the store's answer alone (no run
 * readied), with the audit log vs without: information beside the row, which
 * answers as the runner does (bench-audit-runner.ts).
 */
export async function benchConcurrentAnswers(ctx: Context, server: Server): Promise<void> {
  const clients = 32;
  const each = ctx.quick ? 5 : 25;
  const rounds = ctx.quick ? 2 : 4;
  const client = postgres(server.url, { max: clients, onnotice: () => {} });
  try {
    const db = drizzle({ client }) as unknown as Db;
    const plain: number[] = [];
    const audited: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternating which goes first, so drift on a shared machine hits both.
      if (round % 2 === 0) {
        plain.push(await throughput(db, false, clients, each));
        audited.push(await throughput(db, true, clients, each));
      } else {
        audited.push(await throughput(db, true, clients, each));
        plain.push(await throughput(db, false, clients, each));
      }
    }
    const withAudit = statsOf(audited).median;
    const without = statsOf(plain).median;
    ctx.add({
      section,
      name: `${clients} clients answering different questions at once through the store’s answer alone, with audit vs without, information`,
      goal: { kind: 'info', label: 'printed (the issue’s row answers as the runner does)' },
      ratio: withAudit / without,
      ratioMeaning: 'audited/plain answers/s',
      extra: { answersPerSecondAudited: withAudit, answersPerSecondPlain: without, rounds },
      note: `median of ${rounds} rounds of ${clients} × ${each} store answers: ${withAudit.toFixed(0)} answers/s with the audit log, ${without.toFixed(0)} without`,
    });
  } finally {
    await client.end({ timeout: 5 });
  }
}

/** Grows the log to `total` entries over `chains` chains, through the package's own appends. */
async function fillLog(server: Server, chains: number, total: number): Promise<void> {
  const perChain = total / chains;
  for (let c = 0; c < chains; c++) {
    const chain = `bench-${c}`;
    const head = await auditHead(server.db, chain);
    // A batch of appends is one statement: a million one at a time would take the whole budget.
    for (let seq = (head?.seq ?? 0) + 1; seq <= perChain; seq += 5000) {
      const count = Math.min(5000, perChain - seq + 1);
      const events = Array.from({ length: count }, (_, i) => ({ event: 'bench', seq: seq + i }));
      await appendAuditEvent(server.db, events, { key: KEY, chain });
    }
  }
  await server.sql`vacuum analyze aura.audit_entries`;
}

/** `audit verify` (verifyAudit) over N entries, as entries/s, and at N/10 to show it linear. */
export async function benchAuditVerify(ctx: Context, server: Server): Promise<void> {
  const total = ctx.quick ? 100_000 : 1_000_000;
  const chains = 100;
  // Only the bench's entries: the other rows' questions and answers are cleared first.
  await server.sql`truncate aura.audit_entries, aura.audit_heads, aura.audit_sealed, aura.paused_states cascade`;
  const rate = async (entries: number) => {
    ctx.log(`audit: filling the log to ${entries.toLocaleString('en')} entries`);
    await fillLog(server, chains, entries);
    const started = performance.now();
    const verified = await verifyAudit(server.db, { key: KEY });
    const seconds = (performance.now() - started) / 1000;
    if (!verified.ok) throw new Error(`verify failed: ${JSON.stringify(verified.problems[0])}`);
    return entries / seconds;
  };
  const small = await rate(total / 10);
  const big = await rate(total);
  ctx.add({
    section,
    name: `audit verify over ${total.toLocaleString('en')} entries${ctx.quick ? ' (quick: 1,000,000 in the full run)' : ''}`,
    goal: { kind: 'info', label: 'linear, printed as entries/s' },
    ratio: big,
    ratioMeaning: 'entries/s',
    extra: { entries: total, chains, entriesPerSecond: big, entriesPerSecondAtTenth: small },
    note: `${big.toFixed(0)} entries/s over ${total.toLocaleString('en')} entries in ${chains} chains, ${small.toFixed(0)} entries/s over ${(total / 10).toLocaleString('en')}: ${(big / small).toFixed(2)} of the smaller log's rate`,
  });
  await server.sql`truncate aura.audit_entries, aura.audit_heads, aura.audit_sealed cascade`;
}

/** `rows` pending questions spread over 50 audiences (role-0..role-49), vacuumed. */
async function fillAudiences(server: Server, rows: number): Promise<void> {
  const { sql } = server;
  await sql`truncate aura.paused_states cascade`;
  await sql`
    insert into aura.paused_states (token, conversation_id, kind, question, priority, tool_call_id,
      created_at, audience_roles)
    select 'tok-' || g, 'conv-' || (g % 1000), 'approve', 'Approve ' || g, g % 3, 'call_' || g,
      now() - make_interval(secs => g), array['role-' || (g % 50)]
    from generate_series(1, ${rows}) g`;
  await sql`vacuum analyze aura.paused_states`;
  await sql`vacuum analyze aura.pending_audience`;
}

/** listAnswerable(one operator, 20) at 100,000 questions over 50 audiences vs at 1,000. */
export async function benchPendingForOperator(ctx: Context, server: Server): Promise<void> {
  const store = new AskUserStore(server.db);
  const small = 1000;
  const big = 100_000;
  const operator = { name: 'ana', roles: ['operator', 'role-7'] };
  // One audience in 50 is the operator's: 20 questions of 1,000. A page of 20 at both sizes,
  // so that the two lists return the same rows' worth of work and only the table grows.
  const page = small / 50;
  const list = async () => {
    const rows = await store.listAnswerable(operator, page);
    if (rows.length !== page) throw new Error(`listAnswerable returned ${rows.length} rows`);
  };
  await fillAudiences(server, small);
  const atSmall = await measure({ small: list }, ctx.budget);
  ctx.log(`audit: filling ${big.toLocaleString('en')} pending questions over 50 audiences`);
  await fillAudiences(server, big);
  const atBig = await measure({ big: list }, ctx.budget);
  ctx.add({
    section,
    name: `the pending list of one operator at ${big.toLocaleString('en')} questions over 50 audiences vs ${small.toLocaleString('en')}`,
    goal: { kind: 'at-most', value: 2, label: '≤ 2×' },
    ratio: ratio(atBig.big?.median, atSmall.small?.median),
    ratioMeaning: 'big/small',
    subject: atBig.big,
    floor: atSmall.small,
    note: `listAnswerable(${page}) of an operator in one audience: ${big / 50} of the ${big.toLocaleString('en')} questions are theirs (${page} of ${small.toLocaleString('en')}), a page of ${page} at both`,
  });
  await server.sql`truncate aura.paused_states cascade`;
}
