import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { exportAudit } from '@x/askuser';
import { loadPolicySet, type PolicySource } from '@x/policy';
import { type JsonValue, userMessage } from '@x/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answer,
  decisionOfQuestion,
  decisionsOf,
  ExecutiveError,
  type ExecutiveStorage,
  migrate,
  type PolicyGateOptions,
  policyGate,
  policyToolsOf,
  policyVersionOf,
  policyVersions,
  ReloadingPolicies,
  recordPolicyVersion,
  recordStart,
  runTurn,
  shadowDisagreements,
  sqlExecutiveStorage,
} from '../src/index.js';
import { fresh } from './flows-suite.js';
import { AUDIT_KEY, oneCallModel, PAYMENT_RULES, payments } from './policy-suite.js';

// The candidate: payments are asked of finance but globex's go through, any payee goes, and a
// huge amount makes its rule fail to evaluate (an integer overflow), so that a candidate's
// error is recorded.
const CANDIDATE_RULES = `
@id("pay-checked") @reason("every payment is checked by finance") @ask @audience("finance")
permit (principal, action == Action::"pay", resource)
when { context.input.amount < 1000000 && context.input.payee != "globex" };

@id("globex-trusted") @reason("globex is trusted")
permit (principal, action == Action::"pay", resource)
when { context.input.amount < 1000000 && context.input.payee == "globex" };

@id("pay-overflow") @reason("overflows")
forbid (principal, action == Action::"pay", resource)
when { context.input.amount >= 1000000 && context.input.amount * 9223372036854775807 > 0 };
`;

// A loaded version in which small payments are asked; the next allows them again.
const V1_RULES = `
@id("pay-small-asked") @reason("v1: small payments are asked") @ask @audience("ops")
permit (principal, action == Action::"pay", resource) when { context.input.amount < 50 };
`;
const V2_RULES = `
@id("pay-small-v2") @reason("v2: payments under 50 need nobody")
permit (principal, action == Action::"pay", resource) when { context.input.amount < 50 };
`;

/**
 * Registers the shadow (candidate) set's and the loaded versions' tests on one target kind,
 * through the package's public API.
 */
export async function describePolicyShadowOn(kind: SqlTarget['kind']): Promise<void> {
  for (const spec of (await sqlTargets()).filter((t) => t.kind === kind)) {
    describe.skipIf(spec.skip)(`policy shadow and versions on ${spec.kind}`, () => {
      let target: SqlTarget;
      let storage: ExecutiveStorage;
      const pay = payments();
      const tools = policyToolsOf(pay.gated);
      const compile = (sources: PolicySource[]) => loadPolicySet({ tools, sources });
      const active = compile([{ name: 'payments.cedar', text: PAYMENT_RULES }]);
      const candidate = compile([{ name: 'candidate.cedar', text: CANDIDATE_RULES }]);
      const flow = () => ({ storage, events: { wants: () => false, record: async () => {} } });
      beforeAll(async () => {
        target = await spec.open();
        await migrate(target.db);
        storage = sqlExecutiveStorage(target.db, {
          queue: { synchronousClaim: true },
          auditKey: () => AUDIT_KEY,
        });
      });
      afterAll(() => target?.close());

      /** One turn paying `input` through a gate of `gate`'s options; its question asked if any. */
      async function paying(input: JsonValue, gate: Partial<PolicyGateOptions>) {
        const run = { runId: fresh('r'), conversationId: fresh('c') };
        const model = oneCallModel('pay', input);
        const outcome = await runTurn(
          model,
          [userMessage('pay')],
          { event: () => {} },
          {
            system: '',
            tools: {},
            gated: pay.gated,
            gate: policyGate({
              policies: active,
              storage,
              run,
              requester: 'ada',
              gated: pay.gated,
              effects: pay.effects,
              ...gate,
            }),
          },
        );
        const waiting = await recordStart(flow(), run, { id: 'm' }, outcome, { model: 'm' });
        const token = waiting.status === 'waiting' ? waiting.token : null;
        return { run, model, token };
      }

      it('records the candidate beside each decision with no effect, and lists where they disagree with what people answered', async () => {
        const since = new Date(Date.now() - 1_000);
        const small = await paying({ amount: 20, payee: 'acme' }, { shadow: candidate });
        expect(small.model.seen).toEqual(['paid 20']);
        const large = await paying({ amount: 5000, payee: 'acme' }, { shadow: candidate });
        expect(large.token).not.toBeNull();
        const bob = { identity: { name: 'bob', roles: ['finance'] } };
        await answer(flow(), large.token as string, { action: 'decline', content: 'no' }, bob);
        const trusted = await paying({ amount: 5000, payee: 'globex' }, { shadow: candidate });
        await answer(flow(), trusted.token as string, { action: 'decline', content: 'no' }, bob);
        const outside = await paying({ amount: 20, payee: 'mallory' }, { shadow: candidate });
        expect(outside.model.seen[0]).toMatch(/^Denied by policy/);
        // The candidate fails on this one; the active decision asks, as without a candidate.
        const huge = await paying({ amount: 2_000_000, payee: 'acme' }, { shadow: candidate });
        expect(huge.token).not.toBeNull();
        const [allowed] = await decisionsOf(target.db, small.run.runId);
        expect(allowed).toMatchObject({
          outcome: 'allow',
          policyHash: active.hash,
          shadow: {
            outcome: 'ask',
            ruleIds: ['pay-checked'],
            reason: 'rule "pay-checked": every payment is checked by finance',
            policyHash: candidate.hash,
            error: null,
          },
        });
        const listed = await shadowDisagreements(target.db, { since });
        expect(listed.map((d) => [d.runId, d.outcome, d.shadow.outcome, d.answer])).toEqual([
          [small.run.runId, 'allow', 'ask', null],
          [trusted.run.runId, 'ask', 'allow', 'decline'],
          [outside.run.runId, 'deny', 'ask', null],
          [huge.run.runId, 'ask', 'ask', null],
        ]);
        expect(listed[3]?.shadow.error).toMatch(/overflow/);
        // The large payment: both ask, so it is no disagreement, though people declined it.
        const [asked] = await decisionsOf(target.db, large.run.runId);
        expect(asked?.shadow?.outcome).toBe('ask');
        expect(await shadowDisagreements(target.db, { since, limit: 1 })).toHaveLength(1);
        expect(
          await shadowDisagreements(target.db, { since: new Date(Date.now() + 60_000) }),
        ).toEqual([]);
        // Without a candidate, nothing is recorded beside the decision.
        const plain = await paying({ amount: 20, payee: 'acme' }, {});
        expect((await decisionsOf(target.db, plain.run.runId))[0]?.shadow).toBeNull();
      });

      it('decides with the newest loaded version from the next decision; a question keeps the version that asked it', async () => {
        const following = new ReloadingPolicies({ initial: active, compile });
        const before = await paying({ amount: 20, payee: 'acme' }, { policies: following });
        expect(before.model.seen).toEqual(['paid 20']);
        expect(following.version).toBe(0);
        const v1Sources = [{ name: 'v1.cedar', text: V1_RULES }];
        const v1 = await recordPolicyVersion(storage, {
          policies: compile(v1Sources),
          sources: v1Sources,
          loadedBy: 'ada',
        });
        const asked = await paying({ amount: 20, payee: 'acme' }, { policies: following });
        expect(asked.token).not.toBeNull();
        expect(following.version).toBe(v1.version);
        const v2Sources = [{ name: 'v2.cedar', text: V2_RULES }];
        const v2 = await recordPolicyVersion(storage, {
          policies: compile(v2Sources),
          sources: v2Sources,
          loadedBy: 'bob',
        });
        expect(v2.version).toBe(v1.version + 1);
        // Another process, which never saw v1: its first decision uses v2.
        const other = new ReloadingPolicies({ initial: active, compile });
        const after = await paying({ amount: 20, payee: 'acme' }, { policies: other });
        expect((await decisionsOf(target.db, after.run.runId))[0]).toMatchObject({
          outcome: 'allow',
          ruleIds: ['pay-small-v2'],
          policyHash: v2.policyHash,
        });
        const explained = await decisionOfQuestion(target.db, asked.token as string);
        expect(explained).toMatchObject({
          ruleIds: ['pay-small-asked'],
          policyHash: v1.policyHash,
        });
        expect(await policyVersionOf(target.db, v1.policyHash)).toMatchObject({
          version: v1.version,
          sources: v1Sources,
          loadedBy: 'ada',
        });
        expect((await policyVersions(target.db)).map((v) => v.version)).toEqual([
          v2.version,
          v1.version,
        ]);
        const loaded: unknown[] = [];
        for await (const entry of exportAudit(target.db, { chain: 'policy' })) {
          const data = entry.data as { event?: string };
          if (data.event === 'policy-loaded') loaded.push(data);
        }
        expect(loaded).toEqual([
          {
            event: 'policy-loaded',
            version: v1.version,
            policyHash: v1.policyHash,
            loadedBy: 'ada',
            files: ['v1.cedar'],
          },
          {
            event: 'policy-loaded',
            version: v2.version,
            policyHash: v2.policyHash,
            loadedBy: 'bob',
            files: ['v2.cedar'],
          },
        ]);
      });

      it('refuses a version loaded by nobody and records nothing', async () => {
        const before = await policyVersions(target.db);
        const sources = [{ name: 'v.cedar', text: V2_RULES }];
        const error = await recordPolicyVersion(storage, {
          policies: compile(sources),
          sources,
          loadedBy: '',
        }).catch((e: unknown) => e);
        expect(ExecutiveError.hasCode(error, 'usage'), String(error)).toBe(true);
        expect(await policyVersions(target.db)).toEqual(before);
      });
    });
  }
}
