// `--only policy`: one @x/policy decision with 1,000 rules, against Cedar's own evaluation of
// the same rules with no argument check and no combining (the floor).
import {
  type AuthorizationAnswer,
  preparsePolicySet,
  statefulIsAuthorized,
} from '@cedar-policy/cedar-wasm/nodejs';
import { type DecisionInput, loadPolicySet } from '@x/policy';
import type { Context } from './context.js';
import { measure } from './measure.js';

const TOOLS = 50;
const RULES = 1000;

const tools = Array.from({ length: TOOLS }, (_, t) => ({
  name: `tool_${t}`,
  inputSchema: {
    type: 'object',
    properties: {
      amount: { type: 'integer' },
      payee: { type: 'string' },
      memo: { type: 'string' },
      tags: { type: 'array', items: { type: 'string' } },
    },
    required: ['amount', 'payee'],
  },
}));

/** Rule i: a payee denied, a band of amounts asked of a role, or small amounts allowed to a role. */
function rule(i: number): string {
  const action = `action == Action::"tool_${i % TOOLS}"`;
  const kind = i % 10;
  if (kind === 0) {
    return `@id("deny-${i}") @reason("blocked payee")\nforbid (principal, ${action}, resource)\nwhen { context.input.payee == "blocked-${i}" };`;
  }
  if (kind <= 3) {
    return `@id("ask-${i}") @ask @audience("role-${i % 7}+@lead") @quorum("2") @deadline("1h")\npermit (principal, ${action}, resource)\nwhen { context.input.amount > ${i * 3} && context.input.amount <= ${i * 3 + 500} };`;
  }
  return `@id("allow-${i}") @reason("small")\npermit (principal in Role::"r${i % 7}", ${action}, resource)\nwhen { context.input.amount < ${i} && context.time.hour >= 6 };`;
}

/** Decision p99 with 1,000 rules over 50 tools (target ≤ 0.5 ms), Cedar alone as the floor. */
export async function benchPolicyDecision(ctx: Context): Promise<void> {
  const texts = Array.from({ length: RULES }, (_, i) => rule(i));
  const policies = loadPolicySet({
    tools,
    sources: [{ name: 'bench.cedar', text: texts.join('\n\n') }],
  });
  const floorId = 'bench-policy-floor';
  const staticPolicies = Object.fromEntries(texts.map((text, i) => [`p${i}`, text]));
  if (preparsePolicySet(floorId, { staticPolicies }).type !== 'success') {
    throw new Error('bench: Cedar did not pre-parse the floor set');
  }
  const calls: DecisionInput[] = Array.from({ length: 997 }, (_, k) => ({
    tool: `tool_${k % TOOLS}`,
    input: { amount: (k * 37) % 4000, payee: `payee-${k % 20}`, memo: 'invoice', tags: ['a', 'b'] },
    requester: { name: `user-${k % 13}`, roles: [`r${k % 7}`] },
    run: { id: `run-${k}`, conversation: `conv-${k % 31}`, kind: 'turn' },
    time: new Date(Date.UTC(2026, 11, 7, k % 24)),
  }));
  const outcomes = { allow: 0, ask: 0, deny: 0 };
  for (const call of calls) outcomes[policies.decide(call).outcome]++;
  let next = 0;
  let sink: unknown;
  const bare = (call: DecisionInput): AuthorizationAnswer =>
    statefulIsAuthorized({
      principal: { type: 'User', id: call.requester?.name ?? '' },
      action: { type: 'Action', id: call.tool },
      resource: { type: 'Run', id: call.run.id },
      context: {
        input: call.input as Record<string, string>,
        time: {
          at: { __extn: { fn: 'datetime', arg: (call.time ?? new Date()).toISOString() } },
          hour: (call.time ?? new Date()).getUTCHours(),
          weekday: 1,
        },
        counters: { questions: 0, calls: 0, declines: 0 },
      },
      entities: [
        {
          uid: { type: 'User', id: call.requester?.name ?? '' },
          attrs: {},
          parents: (call.requester?.roles ?? []).map((id) => ({ type: 'Role', id })),
        },
        {
          uid: { type: 'Run', id: call.run.id },
          attrs: { conversation: call.run.conversation, kind: call.run.kind },
          parents: [],
        },
      ],
      preparsedPolicySetId: floorId,
      validateRequest: false,
    });
  const budget = ctx.quick
    ? { time: 300, iterations: 500, rounds: 1 }
    : { time: 2000, iterations: 2000, rounds: 2 };
  const stats = await measure(
    {
      decide: () => {
        sink = policies.decide(calls[next++ % calls.length] as DecisionInput);
      },
      cedar: () => {
        sink = bare(calls[next++ % calls.length] as DecisionInput);
      },
    },
    budget,
  );
  if (sink === undefined) throw new Error('bench: nothing decided');
  const subject = stats.decide;
  const floor = stats.cedar;
  if (!subject || !floor) throw new Error('bench: a task was not measured');
  ctx.add({
    section: 'policy',
    name: `decision p99 with ${RULES} rules over ${TOOLS} tools (${subject.p99.toFixed(3)} ms; Cedar alone ${floor.p99.toFixed(3)} ms)`,
    goal: { kind: 'at-most', value: 0.5, label: '≤ 0.5 ms' },
    ratio: subject.p99,
    ratioMeaning: 'p99 ms',
    subject,
    floor,
    extra: { outcomes, samples: subject.samples, medianOverCedar: subject.median / floor.median },
  });
}
