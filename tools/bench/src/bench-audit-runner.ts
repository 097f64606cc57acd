// The rows of "approvals a team can trust" measured on the answer as the product gives it:
// the runner's `answer` (the pause answered and its run readied in one transaction), over the
// runner's own storage, with the audit log (and an operator's audience check) and without.
import type { AnswerOptions, ResumeAnswer } from '@x/askuser';
import { answer as runnerAnswer } from 'runner/dist/executive/index.js';
import type { Storage } from 'runner/dist/storage/index.js';
import { ask, KEY } from './bench-audit.js';
import { ratio } from './bench-continuation.js';
import type { Context, Server } from './context.js';
import { interleaved, statsOf } from './measure.js';
import { benchStorage } from './runner-cycle.js';
import { startWireCounter, type WireCounts } from './wire-count.js';

const given: ResumeAnswer = { action: 'accept', content: 'approved' };
const section = 'audit';

/** Who answers: an operator checked against the audience with the log, an administrator without. */
const asOperator: AnswerOptions = {
  identity: { name: 'bob', roles: ['operator', 'finance'] },
  signedInWith: 'key',
  channel: 'api',
};
const asAdministrator: AnswerOptions = { answeredBy: 'bob', channel: 'api' };

/** The runner's two storages on `url`: with the audit log (RUNNER_AUDIT_KEY) and without. */
async function openBoth(tmp: string, url: string, pool = 10) {
  const open = async (key: string | undefined) => {
    const saved = { key: process.env.RUNNER_AUDIT_KEY, pool: process.env.RUNNER_DB_POOL };
    if (key === undefined) delete process.env.RUNNER_AUDIT_KEY;
    else process.env.RUNNER_AUDIT_KEY = key;
    process.env.RUNNER_DB_POOL = String(pool);
    try {
      return await benchStorage(tmp, url);
    } finally {
      for (const [name, value] of [
        ['RUNNER_AUDIT_KEY', saved.key],
        ['RUNNER_DB_POOL', saved.pool],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  };
  const plain = await open(undefined);
  const audited = await open(KEY);
  return {
    plain,
    audited,
    close: () => Promise.all([plain.close(), audited.close()]),
  };
}

/** A question of `conversation` for role finance, with its run waiting on it; its token. */
async function waiting(storage: Storage, conversation: string): Promise<string> {
  const [token = ''] = await ask(storage.pauses(), conversation, 1);
  await storage.runs().create({
    runId: `run-${token}`,
    conversationId: conversation,
    status: 'waiting',
    interactionId: token,
  });
  return token;
}

/** The runner's answer of `token`: as an operator with the audit log, as an administrator without. */
function answerAs(storage: Storage, token: string, audited: boolean) {
  return runnerAnswer(storage, token, given, audited ? asOperator : asAdministrator);
}

/**
 * The issue's row: the runner's answer with the audit log and the audience check vs the same
 * answer without either (what `runner answer`, `serve`'s API and the page do), timed in
 * interleaved pairs, each question asked (and its run made to wait) before the timing starts:
 * the difference is a fifth of a millisecond, which separate timed tasks a second apart,
 * under a machine's drifting load, turned into ratios from 1.17 to 2.19 on one idle day.
 */
export async function benchRunnerAnswer(ctx: Context, server: Server): Promise<void> {
  const rounds = ctx.quick ? 2 : 8;
  const pairs = ctx.quick ? 10 : 60;
  const warmup = ctx.quick ? 5 : 20;
  const both = await openBoth(ctx.tmp, server.url);
  try {
    const questions = async (storage: Storage, conversation: string) => {
      const tokens: string[] = [];
      for (let i = 0; i < warmup + rounds * pairs; i++) {
        tokens.push(await waiting(storage, conversation));
      }
      return tokens;
    };
    const plain = await questions(both.plain, 'conv-ra-plain');
    const audited = await questions(both.audited, 'conv-ra-audited');
    const next = (tokens: string[]) => tokens.shift() ?? '';
    const { subject, floor, roundRatios } = await interleaved(
      () => answerAs(both.audited, next(audited), true),
      () => answerAs(both.plain, next(plain), false),
      { rounds, pairs, warmup },
    );
    const sorted = [...roundRatios].sort((x, y) => x - y);
    const range = `${sorted[0]?.toFixed(3)}–${sorted.at(-1)?.toFixed(3)}`;
    ctx.add({
      section,
      name: 'answer with audit and audience check vs today’s answer: the runner’s answer (one transaction with markReady) (PostgreSQL)',
      goal: { kind: 'at-most', value: 1.35, label: '≤ 1.35×' },
      ratio: statsOf(roundRatios).median,
      ratioMeaning: `audited/plain, median of ${rounds} rounds (${range})`,
      subject,
      floor,
      extra: { roundRatios, pooledRatio: ratio(subject.median, floor.median) },
      note: `${rounds} rounds of ${pairs} audited/plain pairs, one right after the other, which goes first alternating; the ratio is the median of the rounds' ratios of medians (range ${range})`,
    });
  } finally {
    await both.close();
  }
}

/** Per answer: statements, round trips and transactions of `counts` over `n` answers. */
const perAnswer = (c: WireCounts, n: number) =>
  `${(c.roundTrips / n).toFixed(2)} round trips, ${(c.statements / n).toFixed(2)} statements, ${(c.transactions / n).toFixed(2)} transactions (${Object.entries(
    c.tags,
  )
    .map(([tag, k]) => `${tag} ${(k / n).toFixed(2)}`)
    .join(', ')})`;

/**
 * What `n` runner answers send on the wire (after 5 that prepare their statements), audited
 * and not, counted by a proxy in front of `url` that the runner's storages connect through;
 * each question is asked before its answer's count starts.
 */
export async function countRunnerAnswers(tmp: string, url: string, n: number) {
  const proxy = await startWireCounter(url);
  try {
    const both = await openBoth(tmp, proxy.url);
    const count = async (audited: boolean) => {
      const storage = audited ? both.audited : both.plain;
      const total: WireCounts = {
        statements: 0,
        roundTrips: 0,
        transactions: 0,
        writing: 0,
        tags: {},
      };
      for (let i = 0; i < n + 5; i++) {
        const token = await waiting(storage, `conv-wire-${audited ? 'audited' : 'plain'}`);
        proxy.take();
        await answerAs(storage, token, audited);
        const c = proxy.take();
        if (i < 5) continue;
        total.statements += c.statements;
        total.roundTrips += c.roundTrips;
        total.transactions += c.transactions;
        total.writing += c.writing;
        for (const [tag, k] of Object.entries(c.tags)) total.tags[tag] = (total.tags[tag] ?? 0) + k;
      }
      return total;
    };
    try {
      return { plain: await count(false), audited: await count(true) };
    } finally {
      await both.close();
    }
  } finally {
    await proxy.close();
  }
}

/** Round trips of the runner's answer on the wire, audited vs not (an information row). */
export async function benchRunnerAnswerWire(ctx: Context, server: Server): Promise<void> {
  const n = ctx.quick ? 20 : 100;
  const { plain, audited } = await countRunnerAnswers(ctx.tmp, server.url, n);
  ctx.add({
    section,
    name: `round trips of the runner’s answer on the wire, audited vs not: ${(audited.roundTrips / n).toFixed(2)} vs ${(plain.roundTrips / n).toFixed(2)}`,
    goal: { kind: 'info', label: 'counted' },
    ratio: audited.roundTrips / plain.roundTrips,
    ratioMeaning: 'audited/plain round trips',
    extra: {
      answers: n,
      audited: { ...audited, roundTripsPerAnswer: audited.roundTrips / n },
      plain: { ...plain, roundTripsPerAnswer: plain.roundTrips / n },
    },
    note: `counted by a TCP proxy over ${n} answers each: audited ${perAnswer(audited, n)}; plain ${perAnswer(plain, n)}`,
  });
}

/** Answers per second of `clients` clients, each answering its own conversation's questions. */
async function throughput(
  storage: Storage,
  audited: boolean,
  clients: number,
  each: number,
): Promise<number> {
  const tokens = await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const mine: string[] = [];
      for (let i = 0; i < each; i++)
        mine.push(await waiting(storage, `conv-rt-${audited ? 'audited' : 'plain'}-${c}`));
      return mine;
    }),
  );
  const started = performance.now();
  await Promise.all(
    tokens.map(async (mine) => {
      for (const token of mine) await answerAs(storage, token, audited);
    }),
  );
  return (clients * each) / ((performance.now() - started) / 1000);
}

/**
 * 32 clients answering different questions at once through the runner's answer (each
 * readies its run), with the audit log and the audience check vs without.
 */
export async function benchConcurrentRunnerAnswers(ctx: Context, server: Server): Promise<void> {
  const clients = 32;
  const each = ctx.quick ? 5 : 25;
  const rounds = ctx.quick ? 2 : 4;
  const both = await openBoth(ctx.tmp, server.url, clients);
  try {
    const plain: number[] = [];
    const audited: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternating which goes first, so drift on a shared machine hits both.
      if (round % 2 === 0) {
        plain.push(await throughput(both.plain, false, clients, each));
        audited.push(await throughput(both.audited, true, clients, each));
      } else {
        audited.push(await throughput(both.audited, true, clients, each));
        plain.push(await throughput(both.plain, false, clients, each));
      }
    }
    const withAudit = statsOf(audited).median;
    const without = statsOf(plain).median;
    ctx.add({
      section,
      name: `${clients} clients answering different questions at once (the runner’s answer), with audit vs without`,
      goal: { kind: 'at-least', value: 0.8, label: '≥ 0.8× the throughput' },
      ratio: withAudit / without,
      ratioMeaning: 'audited/plain answers/s',
      extra: { answersPerSecondAudited: withAudit, answersPerSecondPlain: without, rounds },
      note: `median of ${rounds} rounds of ${clients} × ${each} runner answers: ${withAudit.toFixed(0)} answers/s with the audit log, ${without.toFixed(0)} without`,
    });
  } finally {
    await both.close();
  }
}
