import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeLlm, payingAgent, startFakeLlm } from '@internal/fake-llm';
import { ExecutiveError, MAX_GRANTS } from '@x/executive';
import type { Sql } from 'postgres';
import { runnerPolicies } from 'runner/dist/executive/index.js';
import { modelFromId } from 'runner/dist/model/index.js';
import { knob } from '../knobs.js';
import { type RunnerProcess, sleep, startRunner } from '../proc.js';
import type { Tally } from '../report.js';
import { answer, type Storage, startRun } from '../runner.js';
import { withDatabase } from './faults.js';

/** SIGKILLs of a working `wake` or `serve`, alternately (full 40). */
const KILLS = knob('RELIABILITY_POLICY_KILLS', 40, 4);
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

/** Starts conversations until `least` runs are unfinished. */
async function keepBusy(
  storage: Storage,
  sql: Sql,
  started: { n: number },
  env: NodeJS.ProcessEnv,
  policyFile: string,
) {
  const [row] = await sql`select count(*)::int as n from x_continuation.runs
    where status <> 'completed' and conversation_id like 'policy-%'`;
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

/** Resolves on the process's first claim, when it exits, or after `ms`. */
function claimedOrAfter(proc: RunnerProcess, ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms);
    proc.onEvent((event) => {
      if (event.type === 'run-claimed') resolve();
    });
    void proc.done.then(() => resolve());
  });
}

/**
 * Policy decisions under SIGKILL, on PostgreSQL: conversations whose transfers a Cedar policy
 * decides (under 50 allowed, 50 to 1,000 one of finance, over 1,000 two and never the
 * requester, a payee off the list denied; some granted the large one at exec) are answered
 * while `runner wake` and `runner serve` are killed at random moments of their work; then a
 * wake finishes them. Checked from the database: every allowed call is one the policy (or a
 * granted scope where it would ask) allows, no call is asked twice, a declined call called
 * again is denied unasked, and each allowed or approved transfer has one effect.
 */
export async function policyKills(tally: Tally): Promise<void> {
  const fake: FakeLlm = await startFakeLlm(payingAgent('transfer_funds', TRANSFERS));
  const folder = mkdtempSync(join(tmpdir(), 'x-rel-policy-'));
  const policyFile = join(folder, 'transfers.cedar');
  writeFileSync(policyFile, POLICY);
  const refusals = { n: 0 };
  try {
    await withDatabase(async (database, sql, storage) => {
      const env = {
        DATABASE_URL: database.url,
        RUNNER_POLICY: policyFile,
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_API_KEY: 'fake',
        // The retry must land inside the window however slow the machine; every kill ends an attempt.
        RUNNER_DENIAL_WINDOW_MS: '3600000',
        RUNNER_MAX_ATTEMPTS: '100000',
        RUNNER_DEMO_TOOL_DELAY_MS: '200',
      };
      const started = { n: 0 };
      for (let kill = 0; kill < KILLS; kill++) {
        await keepBusy(storage, sql, started, env, policyFile);
        await answerAll(storage, tally, refusals);
        const args = kill % 2 === 0 ? ['wake', '--json'] : ['serve', '--json', '--port', '0'];
        const proc = startRunner(args, env);
        await claimedOrAfter(proc, 5_000);
        await sleep(Math.random() * 800);
        proc.child.kill('SIGKILL');
        tally.faults++;
        await proc.done;
      }
      const finisher = startRunner(['wake', '--json'], env);
      try {
        const deadline = Date.now() + 300_000;
        for (;;) {
          await answerAll(storage, tally, refusals);
          const [row] = await sql`select count(*) filter (where status = 'completed')::int as n,
              count(*) filter (where status in ('failed', 'cancelled'))::int as bad
            from x_continuation.runs where conversation_id like 'policy-%'`;
          if (row?.bad) {
            tally.fail(`${row.bad} runs failed or were cancelled: ${finisher.stderr}`);
            break;
          }
          if (row?.n === started.n) break;
          if (Date.now() > deadline) {
            tally.fail(`only ${row?.n} of ${started.n} runs completed: ${finisher.stderr}`);
            break;
          }
          await sleep(200);
        }
      } finally {
        finisher.child.kill('SIGTERM');
        await finisher.done;
      }
      await check(tally, sql, { ...env, RUNNER_POLICY: policyFile }, started.n, refusals.n);
    });
  } finally {
    await fake.close();
    rmSync(folder, { recursive: true, force: true });
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
  sql: Sql,
  env: NodeJS.ProcessEnv,
  conversations: number,
  refusals: number,
): Promise<void> {
  const policies = runnerPolicies({ ...process.env, ...env });
  const decisions = await sql<DecisionRow[]>`select run_id, conversation_id, tool_call_id,
      arguments, requester, outcome, reason, token from x_executive.policy_decisions
    where tool = 'transfer_funds' order by decided_at`;
  const grants = await sql<{ run_id: string; n: number }[]>`select run_id, count(*)::int as n
    from x_executive.policy_grants group by run_id`;
  const granted = new Map(grants.map((g) => [g.run_id, g.n]));
  tally.cases = decisions.length;
  let preApprovedAllows = 0;
  let windowDenials = 0;
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
      windowDenials++;
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
  const twice = await sql<{ conversation_id: string; question: string; n: number }[]>`
    select conversation_id, question, count(*)::int as n from aura.paused_states
    where conversation_id like 'policy-%' group by conversation_id, question having count(*) > 1`;
  for (const t of twice) tally.duplicate(`${t.conversation_id} asked "${t.question}" ${t.n} times`);
  const asks = decisions.filter((d) => d.outcome === 'ask');
  const questions = await sql<{ n: number }[]>`select count(*)::int as n from aura.paused_states
    where conversation_id like 'policy-%'`;
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
    windowDenials === wantDenials,
    () => `${windowDenials} retries denied by the window, want ${wantDenials}`,
  );
  // Each allowed or approved transfer ran once; nothing else ran.
  const effects = await sql<{ amount: number; to: string; invocations: number }[]>`
    select (arguments->>'amount')::float8 as amount, arguments->>'to' as to, invocations
    from runner.tool_effects where tool = 'transfer_funds'`;
  const want = Array.from({ length: conversations }, (_, n) => (declines500(n) ? 2 : 3)).reduce(
    (a, b) => a + b,
    0,
  );
  tally.check(effects.length === want, () => `${effects.length} transfers ran, want ${want}`);
  for (const e of effects) {
    tally.check(e.to !== 'mallory', () => `a transfer to mallory ran (${e.amount})`);
  }
  tally.note(
    `${conversations} conversations, ${decisions.length} decisions, ${asks.length} questions, ${preApprovedAllows} allowed by a scope granted at exec, ${windowDenials} retries denied by the denial window, ${refusals} approvals by the requester refused, ${effects.length} transfers, one each`,
  );
}
