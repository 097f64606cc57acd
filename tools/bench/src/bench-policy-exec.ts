// `--only policy`: exec → question through @x/executive with the policy gate (a Cedar rule
// asks the call, the decision recorded with the question) against the same cycle with no
// policy (every gated call asks), on a database of its own on the PostgreSQL server.
import { randomUUID } from 'node:crypto';
import {
  type GatedTools,
  type Model,
  migrate,
  policyGate,
  policyToolsOf,
  ReloadingPolicies,
  recordPolicyVersion,
  recordStart,
  runTurn,
  sqlExecutiveStorage,
} from '@x/executive';
import { loadPolicySet } from '@x/policy';
import { assistantMessage, userMessage } from '@x/wire';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { z } from 'zod';
import type { Context, Db } from './context.js';
import { createDatabase, probe, serverUrl } from './db.js';
import { interleaved, statsOf } from './measure.js';

const RULES = `
@id("pay-small") @reason("payments under 50 need nobody")
permit (principal, action == Action::"pay", resource) when { context.input.amount < 50 };

@id("pay-over-1000") @reason("payments over 1,000 need two of finance")
@ask @audience("finance") @quorum("2") @deadline("1h") @default("decline") @requesterMayNotAnswer
permit (principal, action == Action::"pay", resource) when { context.input.amount > 1000 };

@id("payee-list") @reason("the payee is not on the list")
forbid (principal, action == Action::"pay", resource)
when { !(["acme", "globex"].contains(context.input.payee)) };
`;

// The shadow candidate: every payment asked of finance.
const CANDIDATE = `
@id("pay-checked") @reason("every payment is checked") @ask @audience("finance")
permit (principal, action == Action::"pay", resource);
`;

const gated: GatedTools = {
  pay: {
    description: 'Pays an amount to a payee',
    input: z.object({ amount: z.number().int(), payee: z.string() }),
    run: async () => 'paid',
  },
};

/** A model whose turn calls `pay` with an amount the rules ask about. */
const model: Model = {
  id: 'bench:pay',
  generate: async () =>
    assistantMessage({
      type: 'tool_use',
      id: 'tu1',
      name: 'pay',
      input: { amount: 5000, payee: 'acme' },
    }),
};

const NAME =
  'exec → question with a policy vs without: a gated call asked, decided by Cedar and recorded with its question (PostgreSQL)';
const FOLLOWING_NAME =
  'exec → question with a policy following loaded versions and a shadow candidate vs without (PostgreSQL)';

/**
 * The exec → question cycle with the policy gate vs without (target ≤ 1.05×), and with a gate
 * that follows loaded versions (`ReloadingPolicies`, a version loaded) and records a shadow
 * candidate's outcome vs without.
 */
export async function benchPolicyExec(ctx: Context): Promise<void> {
  const section = 'policy';
  const url = serverUrl();
  const problem = await probe(url);
  if (problem !== undefined) {
    for (const skipped of [NAME, FOLLOWING_NAME]) {
      ctx.add({
        section,
        name: skipped,
        goal: { kind: 'at-most', value: 1.05, label: '≤ 1.05×' },
        ratioMeaning: 'with/without',
        status: 'skipped',
        note: `no PostgreSQL server (${problem})`,
      });
    }
    return;
  }
  const database = await createDatabase(url, '_policy');
  const client = postgres(database.url, { max: 4, onnotice: () => {} });
  try {
    const db = drizzle({ client }) as unknown as Db;
    await migrate(db);
    const storage = sqlExecutiveStorage(db);
    const flow = { storage, events: { wants: () => false, record: async () => {} } };
    const policies = loadPolicySet({
      tools: policyToolsOf(gated),
      sources: [{ name: 'bench.cedar', text: RULES }],
    });
    const effects = { apply: async () => ({ invocations: 1 }) };
    const sources = [{ name: 'bench.cedar', text: RULES }];
    const compile = (given: typeof sources) =>
      loadPolicySet({ tools: policyToolsOf(gated), sources: given });
    await recordPolicyVersion(storage, { policies, sources, loadedBy: 'bench' });
    const following = new ReloadingPolicies({ initial: compile([]), compile });
    const shadow = compile([{ name: 'candidate.cedar', text: CANDIDATE }]);
    const cycle = async (mode: 'without' | 'policy' | 'following') => {
      const run = { runId: randomUUID(), conversationId: randomUUID() };
      const common = { storage, run, requester: 'ada', gated, effects };
      const gate =
        mode === 'policy'
          ? { gate: policyGate({ policies, ...common }) }
          : mode === 'following'
            ? { gate: policyGate({ policies: following, shadow, ...common }) }
            : {};
      const outcome = await runTurn(
        model,
        [userMessage('pay')],
        { event: () => {} },
        {
          system: '',
          tools: {},
          gated,
          ...gate,
        },
      );
      const waiting = await recordStart(flow, { ...run, requester: 'ada' }, model, outcome, {
        model: model.id,
      });
      if (waiting.status !== 'waiting')
        throw new Error(`bench: the call was not asked (${waiting.status})`);
    };
    const rounds = ctx.quick ? 3 : 7;
    const pairs = ctx.quick ? 40 : 200;
    for (const [mode, rowName] of [
      ['policy', NAME],
      ['following', FOLLOWING_NAME],
    ] as const) {
      await measured(
        ctx,
        rowName,
        rounds,
        pairs,
        () => cycle(mode),
        () => cycle('without'),
      );
    }
  } finally {
    await client.end({ timeout: 5 });
    await database.drop();
  }
}

/** One row: `subject` against `floor` in interleaved rounds, the median of the rounds' ratios. */
async function measured(
  ctx: Context,
  name: string,
  rounds: number,
  pairs: number,
  subjectCycle: () => Promise<void>,
  floorCycle: () => Promise<void>,
): Promise<void> {
  const section = 'policy';
  const { subject, floor, roundRatios } = await interleaved(subjectCycle, floorCycle, {
    rounds,
    pairs,
    warmup: 30,
  });
  const sorted = [...roundRatios].sort((x, y) => x - y);
  const range = `${sorted[0]?.toFixed(3)}–${sorted.at(-1)?.toFixed(3)}`;
  ctx.add({
    section,
    name,
    goal: { kind: 'at-most', value: 1.05, label: '≤ 1.05×' },
    ratio: statsOf(roundRatios).median,
    ratioMeaning: `with/without, median of ${rounds} rounds (${range})`,
    subject,
    floor,
    extra: { roundRatios },
    note: `${rounds} rounds of ${pairs} pairs (the turn with a scripted model, the pause, continuation, run and, with a policy, the decision in one transaction); the ratio is the median of the rounds' ratios of medians`,
  });
}
