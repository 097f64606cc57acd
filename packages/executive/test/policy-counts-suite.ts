import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { loadPolicySet, type PolicySet } from '@x/policy';
import { type AssistantMessage, assistantMessage, type JsonValue, userMessage } from '@x/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  decisionCountsSince,
  type ExecutiveStorage,
  type GatedTools,
  migrate,
  policyGate,
  policyToolsOf,
  recordStart,
  runTurn,
  sqlExecutiveStorage,
} from '../src/index.js';
import { fresh } from './flows-suite.js';

const gated: GatedTools = {
  pay: {
    description: 'Pays an amount to a payee',
    input: z.object({ amount: z.number().int(), payee: z.string() }),
    run: async (input) => `paid ${(input as { amount: number }).amount}`,
  },
};

const RULES = `
@id("pay-small") @reason("payments under 50 need nobody")
permit (principal, action == Action::"pay", resource) when { context.input.amount < 50 };

@id("pay-over-1000") @reason("payments over 1,000 need two of finance") @ask @audience("finance") @quorum("2")
permit (principal, action == Action::"pay", resource) when { context.input.amount > 1000 };

@id("payee-list") @reason("the payee is not on the list")
forbid (principal, action == Action::"pay", resource) when { !(["acme", "globex"].contains(context.input.payee)) };

@id("no-mallory") @reason("mallory is never paid")
forbid (principal, action == Action::"pay", resource) when { context.input.payee == "mallory" };
`;

/**
 * Registers the tests of what each rule decided (`decisionCountsSince`) on one target kind, in
 * a database of its own: decisions made through the policy gate, questions asked as a run does.
 */
export async function describeDecisionCountsOn(kind: SqlTarget['kind']): Promise<void> {
  for (const spec of (await sqlTargets()).filter((t) => t.kind === kind)) {
    describe.skipIf(spec.skip)(`what each rule decided, on ${spec.kind}`, () => {
      let target: SqlTarget;
      let storage: ExecutiveStorage;
      let policies: PolicySet;
      beforeAll(async () => {
        target = await spec.open();
        await migrate(target.db);
        storage = sqlExecutiveStorage(target.db, { queue: { synchronousClaim: true } });
        policies = loadPolicySet({
          tools: policyToolsOf(gated),
          sources: [{ name: 'payments.cedar', text: RULES }],
        });
      });
      afterAll(() => target?.close());

      /** One turn that calls `pay` with `input` through the gate; a question it raises is asked. */
      async function pay(input: JsonValue): Promise<void> {
        const run = { runId: fresh('r'), conversationId: fresh('c') };
        let calls = 0;
        const model = {
          id: 'test:pay',
          async generate(): Promise<AssistantMessage> {
            return calls++ === 0
              ? assistantMessage({ type: 'tool_use', id: 'tu1', name: 'pay', input })
              : assistantMessage('done');
          },
        };
        const effects = { apply: async () => ({ invocations: 1 }) };
        const gate = policyGate({ policies, storage, run, gated, effects });
        const outcome = await runTurn(
          model,
          [userMessage('pay')],
          { event: () => {} },
          { system: '', tools: {}, gated, gate },
        );
        if (outcome.status === 'suspended') {
          const flow = { storage, events: { wants: () => false, record: async () => {} } };
          await recordStart(flow, run, model, outcome, { model: model.id });
        }
      }

      it('counts each outcome by rule, a decision of two rules for both, one of no rule under null', async () => {
        const before = new Date(Date.now() - 1_000);
        await pay({ amount: 20, payee: 'acme' });
        await pay({ amount: 30, payee: 'globex' });
        await pay({ amount: 5000, payee: 'acme' });
        await pay({ amount: 20, payee: 'mallory' });
        await pay({ amount: 20, payee: 'eve' });
        // No rule matches: the set asks anyone.
        await pay({ amount: 500, payee: 'acme' });
        expect(await decisionCountsSince(target.db, before)).toEqual([
          { ruleId: 'no-mallory', allow: 0, deny: 1, ask: 0 },
          { ruleId: 'pay-over-1000', allow: 0, deny: 0, ask: 1 },
          { ruleId: 'pay-small', allow: 2, deny: 0, ask: 0 },
          { ruleId: 'payee-list', allow: 0, deny: 2, ask: 0 },
          { ruleId: null, allow: 0, deny: 0, ask: 1 },
        ]);
      });

      it('counts only the decisions made since the time given', async () => {
        const after = new Date(Date.now() + 60_000);
        expect(await decisionCountsSince(target.db, after)).toEqual([]);
        const now = new Date();
        await pay({ amount: 10, payee: 'acme' });
        expect(await decisionCountsSince(target.db, now)).toEqual([
          { ruleId: 'pay-small', allow: 1, deny: 0, ask: 0 },
        ]);
      });
    });
  }
}
