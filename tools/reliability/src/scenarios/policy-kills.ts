import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeLlm, payingAgent, startFakeLlm } from '@internal/fake-llm';
import { ExecutiveError, MAX_GRANTS } from '@x/executive';
import { type SQL, sql } from 'drizzle-orm';
import { runnerPolicies } from 'runner/dist/executive/index.js';
import { modelFromId } from 'runner/dist/model/index.js';
import { openStorage } from 'runner/dist/storage/index.js';
import { knob, quick } from '../knobs.js';
import { nextEvent, runRunner, sleep, startRunner } from '../proc.js';
import type { Tally } from '../report.js';
import { queryRows, runCounts } from '../rows.js';
import { answer, type Storage, startRun, untilAllCompleted } from '../runner.js';
import { withDatabase } from './faults.js';

/** SIGKILLs of a working `wake` or `serve`, alternately, on PostgreSQL (each about 5 s: full 20). */
const KILLS = knob('RELIABILITY_POLICY_KILLS', 20, 4);
/** The same on the embedded default, where each process and each look of the suite opens PGlite (full 16). */
const KILLS_EMBEDDED = knob('RELIABILITY_POLICY_KILLS_EMBEDDED', 16, 16);
/** Conversations kept unfinished while the kills land. */
const CONCURRENCY = 4;

/** Who approves a transfer: the payments example's policy over the runner's `transfer_funds`. */
const POLICY = `
@id("small") @reason("transfers under 50 need nobody")
permit (principal, action == Action::"transfer_funds", resource)
when { context.input.amount.lessThan(decimal("50.0")) };

@id("medium") @reason("transfers of 50 to 1,000 need one of finance")
@ask @audience("finance") @deadline("1h") @default("decline")
permit (principal, action == Action::"transfer_funds", resource)
when { context.input.amount.greaterThanOrEqual(decimal("50.0")) && context.input.amount.lessThanOrEqual(decimal("1000.0")) };

@id("large") @reason("transfers over 1,000 need two of finance")
@ask @audience("finance") @quorum("2") @requesterMayNotAnswer
permit (principal, action == Action::"transfer_funds", resource)
when { context.input.amount.greaterThan(decimal("1000.0")) };

@id("payees") @reason("the payee is not on the list")
forbid (principal, action == Action::"transfer_funds", resource)
unless { ["acme", "globex"].contains(context.input.to) };
`;

const transfer = (to: string, amount: number) => ({ to, amount, currency: 'EUR' });
/** Each conversation's model asks for these, retrying a declined one once. */
const TRANSFERS = [
  transfer('acme', 20),
  transfer('acme', 500),
  transfer('globex', 5000),
  transfer('mallory', 20),
];
/** Every third conversation is granted the large transfer at exec. */
const preApproved = (n: number) => n % 3 === 0;
/** Odd conversations have their 500 declined; the model calls it again inside the window. */
const declines500 = (n: number) => n % 2 === 1;
const finance = (name: string) => ({ identity: { name, roles: ['finance'] } });

/**
 * Answers every pending question as finance would: the 500 by bob (declined in odd
 * conversations), the 5,000 by bob and carol, after the requester ada tried and was refused.
 */
async function answerAll(storage: Storage, tally: Tally, refusals: { n: number }) {
  for (const pause of await storage.pauses().listPendingAll(1000)) {
    const n = Number(pause.conversationId.replace('policy-', ''));
    const amount = (pause.resumeContext as { gated?: { arguments?: { amount?: number } } } | null)
      ?.gated?.arguments?.amount;
    if (amount === 500) {
      const action = declines500(n) ? 'decline' : 'accept';
      await answer(storage, pause.token, { action, content: '' }, finance('bob'));
      continue;
    }
    const byAda = await answer(
      storage,
      pause.token,
      { action: 'accept', content: '' },
      finance('ada'),
    )
      .then(() => undefined)
      .catch((error: unknown) => error);
    if (ExecutiveError.hasCode(byAda, 'forbidden')) refusals.n++;
    else tally.fail(`${pause.token}: the requester's approval was not refused: ${String(byAda)}`);
    for (const name of ['bob', 'carol']) {
      await answer(storage, pause.token, { action: 'accept', content: '' }, finance(name));
    }
  }
}

/** Starts conversations until CONCURRENCY runs are unfinished. */
async function keepBusy(
  storage: Storage,
  started: { n: number },
  env: NodeJS.ProcessEnv,
  policyFile: string,
) {
  const [row] = await queryRows<{ n: number }>(
    storage.db,
    sql`select count(*)::int as n from x_continuation.runs
      where status <> 'completed' and conversation_id like 'policy-%'`,
  );
  const model = modelFromId('anthropic:fake', env);
  const policies = runnerPolicies({ ...process.env, ...env, RUNNER_POLICY: policyFile });
  for (let open = row?.n ?? 0; open < CONCURRENCY; open++) {
    const n = started.n++;
    const conversation = `policy-${n}`;
    const run = await startRun(
      storage,
      model,
      'Pay the suppliers',
      conversation,
      { event: () => {} },
      {
        requester: 'ada',
        policies,
        fresh: true,
        ...(preApproved(n)
          ? { preApproved: [{ tool: 'transfer_funds', arguments: { to: 'globex', amount: 5000 } }] }
          : {}),
      },
    );
    if (run.status !== 'waiting') throw new Error(`${conversation}: ${run.status}`);
  }
}

/**
 * Where the scenario runs: the runner's processes get `env` and `args`; `use` lends the
 * storage to this process (on the embedded default only while no runner process holds the
 * folder, since PGlite is one process's database).
 */
interface Place {
  env: NodeJS.ProcessEnv;
  args: string[];
  use<T>(fn: (storage: Storage) => Promise<T>): Promise<T>;
}

/**
 * Policy decisions under SIGKILL: conversations whose transfers a Cedar policy decides (under
 * 50 allowed, 50 to 1,000 one of finance, over 1,000 two and never the requester, a payee off
 * the list denied; some granted the large one at exec) are answered while `runner wake` and
 * `runner serve` are killed, alternately, at a random moment after their first claim; then
 * wakes finish them. Checked from the database: every allowed call is one the policy (or a
 * granted scope where it would ask) allows, no call is asked twice, a declined call called
 * again is denied unasked, and each allowed or approved transfer has one effect.
 */
async function policyKills(tally: Tally, kills: number, place: Place): Promise<void> {
  const fake: FakeLlm = await startFakeLlm(payingAgent('transfer_funds', TRANSFERS));
  const folder = mkdtempSync(join(tmpdir(), 'x-rel-policy-'));
  const policyFile = join(folder, 'transfers.cedar');
  writeFileSync(policyFile, POLICY);
  const refusals = { n: 0 };
  const env = {
    ...place.env,
    RUNNER_POLICY: policyFile,
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'fake',
    // The retry must land inside the window however slow the machine; every kill ends an attempt.
    RUNNER_DENIAL_WINDOW_MS: '3600000',
    RUNNER_MAX_ATTEMPTS: '100000',
    RUNNER_DEMO_TOOL_DELAY_MS: '200',
  };
  try {
    const started = { n: 0 };
    let afterClaim = 0;
    for (let kill = 0; kill < kills; kill++) {
      await place.use(async (storage) => {
        await keepBusy(storage, started, env, policyFile);
        await answerAll(storage, tally, refusals);
      });
      const command = kill % 2 === 0 ? ['wake'] : ['serve', '--port', '0'];
      const proc = startRunner([...command, '--json', ...place.args], env);
      if (await nextEvent(proc, (e) => e.type === 'run-claimed', 120_000)) {
        afterClaim++;
        // A resume takes about a second here: some kills cut one, some land after it.
        await sleep(Math.random() * 1_500);
      } else {
        tally.note(
          `kill ${kill}: ${command[0]} claimed nothing (exit ${proc.child.exitCode}): ${proc.stderr.slice(-300)}`,
        );
      }
      proc.child.kill('SIGKILL');
      tally.faults++;
      await proc.done;
    }
    let output = '';
    await untilAllCompleted(
      tally,
      started.n,
      async () => {
        const counts = await place.use(async (storage) => {
          await answerAll(storage, tally, refusals);
          return runCounts(storage.db, 'policy-');
        });
        if (counts.completed < started.n) {
          const wake = await runRunner(['wake', '--once', '--json', ...place.args], env);
          output = wake.stderr;
        }
        return counts;
      },
      () => output,
    );
    await place.use((storage) => check(tally, storage, env, started.n, refusals.n));
    tally.note(`${afterClaim} of ${kills} kills landed after the process claimed a run`);
  } finally {
    await fake.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

/** {@link policyKills} on a fresh PostgreSQL database, its storage open throughout. */
export async function policyKillsPostgres(tally: Tally): Promise<void> {
  await withDatabase((database, _sql, storage) =>
    policyKills(tally, KILLS, {
      env: { DATABASE_URL: database.url },
      args: [],
      use: (fn) => fn(storage),
    }),
  );
}

/** {@link policyKills} on a fresh data folder: `wake` and `serve` each own it while they live. */
export async function policyKillsEmbedded(tally: Tally): Promise<void> {
  // Each process and each look of the suite starts PGlite: the quick run leaves this to the full run.
  if (quick) return tally.skip('full run only (pnpm test:reliability): each process starts PGlite');
  const data = mkdtempSync(join(tmpdir(), 'x-rel-policy-data-'));
  try {
    await policyKills(tally, KILLS_EMBEDDED, {
      env: {},
      args: ['--data', data],
      async use(fn) {
        const storage = await openStorage({ dataDir: data, command: 'reliability', log: () => {} });
        try {
          return await fn(storage);
        } finally {
          await storage.close();
        }
      },
    });
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

interface DecisionRow {
  run_id: string;
  conversation_id: string;
  tool_call_id: string;
  arguments: { to: string; amount: number; currency: string };
  requester: string | null;
  outcome: 'allow' | 'deny' | 'ask';
  reason: string;
  token: string | null;
}

async function check(
  tally: Tally,
  storage: Storage,
  env: NodeJS.ProcessEnv,
  conversations: number,
  refusals: number,
): Promise<void> {
  const policies = runnerPolicies({ ...process.env, ...env });
  const rows = <T>(query: SQL) => queryRows<T>(storage.db, query);
  const decisions = await rows<DecisionRow>(sql`select run_id, conversation_id, tool_call_id,
      arguments, requester, outcome, reason, token from x_executive.policy_decisions
    where tool = 'transfer_funds' order by decided_at`);
  const grants = await rows<{ run_id: string; n: number }>(sql`select run_id, count(*)::int as n
    from x_executive.policy_grants group by run_id`);
  const granted = new Map(grants.map((g) => [g.run_id, g.n]));
  tally.cases = decisions.length;
  let preApprovedAllows = 0;
  const windowDenials: string[] = [];
  for (const d of decisions) {
    const n = Number(d.conversation_id.replace('policy-', ''));
    const now = policies.decide({
      tool: 'transfer_funds',
      input: d.arguments,
      requester: d.requester === null ? null : { name: d.requester },
      run: { id: d.run_id, conversation: d.conversation_id, kind: 'turn' },
    });
    const call = `${d.conversation_id} ${JSON.stringify(d.arguments)}`;
    if (d.outcome === 'allow') {
      const byGrant = d.reason.startsWith('pre-approved at exec');
      if (byGrant) preApprovedAllows++;
      tally.check(
        now.outcome === 'allow' ||
          (byGrant && now.outcome === 'ask' && preApproved(n) && d.arguments.amount === 5000),
        () => `${call} was allowed (${d.reason}); the policy says ${now.outcome}`,
      );
    } else if (d.outcome === 'deny' && now.outcome !== 'deny') {
      windowDenials.push(`${d.conversation_id} ${d.tool_call_id}`);
      tally.check(
        /declined/.test(d.reason) && declines500(n) && d.arguments.amount === 500,
        () => `${call} was denied (${d.reason}); the policy says ${now.outcome}`,
      );
    }
  }
  for (const [run, n] of granted) {
    tally.check(n <= MAX_GRANTS, () => `run ${run} holds ${n} scopes, more than ${MAX_GRANTS}`);
  }
  // No call asked twice: one question per tool call, and per conversation and arguments.
  const twice = await rows<{ conversation_id: string; question: string; n: number }>(sql`
    select conversation_id, question, count(*)::int as n from aura.paused_states
    where conversation_id like 'policy-%' group by conversation_id, question having count(*) > 1`);
  for (const t of twice) tally.duplicate(`${t.conversation_id} asked "${t.question}" ${t.n} times`);
  const asks = decisions.filter((d) => d.outcome === 'ask');
  const questions = await rows<{ n: number }>(sql`select count(*)::int as n from aura.paused_states
    where conversation_id like 'policy-%'`);
  tally.check(
    asks.length === (questions[0]?.n ?? 0),
    () => `${asks.length} asking decisions, ${questions[0]?.n} questions`,
  );
  // Each conversation: the 500 asked once, the 5,000 asked unless granted, the retry denied unasked.
  const expectedAsks = Array.from({ length: conversations }, (_, n) => (preApproved(n) ? 1 : 2));
  tally.check(
    asks.length === expectedAsks.reduce((a, b) => a + b, 0),
    () => `${asks.length} questions asked, want ${expectedAsks.reduce((a, b) => a + b, 0)}`,
  );
  const wantDenials = Array.from({ length: conversations }, (_, n) => n).filter(declines500).length;
  tally.check(
    windowDenials.length === wantDenials,
    () =>
      `${windowDenials.length} retries denied by the window, want ${wantDenials}: ${windowDenials.join('; ')}`,
  );
  // Each allowed or approved transfer ran once; nothing else ran.
  const effects = await rows<{ key: string; amount: number; to: string; invocations: number }>(sql`
    select key, (arguments->>'amount')::float8 as amount, arguments->>'to' as to, invocations
    from runner.tool_effects where tool = 'transfer_funds'`);
  const want = Array.from({ length: conversations }, (_, n) => (declines500(n) ? 2 : 3)).reduce(
    (a, b) => a + b,
    0,
  );
  tally.check(
    effects.length === want,
    () =>
      `${effects.length} transfers ran, want ${want}: ${effects.map((e) => `${e.key} ${e.to} ${e.amount}`).join('; ')}`,
  );
  for (const e of effects) {
    tally.check(e.to !== 'mallory', () => `a transfer to mallory ran (${e.amount})`);
  }
  tally.note(
    `${conversations} conversations, ${decisions.length} decisions, ${asks.length} questions, ${preApprovedAllows} allowed by a scope granted at exec, ${windowDenials.length} retries denied by the denial window, ${refusals} approvals by the requester refused, ${effects.length} transfers, one each`,
  );
}
