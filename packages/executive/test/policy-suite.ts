import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { type AuditEntry, exportAudit } from '@x/askuser';
import { loadPolicySet, PolicyError, type PolicySet } from '@x/policy';
import {
  type AssistantMessage,
  assistantMessage,
  type JsonValue,
  type Message,
  toolResults,
  userMessage,
} from '@x/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answer,
  argumentsDigest,
  decisionOfQuestion,
  decisionsOf,
  decisionsSince,
  type EffectLog,
  ExecutiveError,
  type ExecutiveStorage,
  type GatedTools,
  grantScopes,
  grantsOf,
  type Model,
  type ModelRequest,
  migrate,
  type PolicyGateOptions,
  policyGate,
  policyToolsOf,
  questionPolicyOf,
  recordStart,
  runTurn,
  sqlExecutiveStorage,
  stop,
} from '../src/index.js';
import { fresh } from './flows-suite.js';

export const AUDIT_KEY = 'an audit key of the policy tests';

/** The idempotency key of an allowed `pay` call made right after the turn's one user message. */
const keyOf = (runId: string, input: JsonValue) =>
  `policy:${runId}:1:pay:${argumentsDigest(input)}`;

/** A payment tool whose runs are counted by idempotency key (the effect log's contract). */
export function payments() {
  const applied = new Map<string, number>();
  const effects: EffectLog = {
    apply: async (key) => {
      applied.set(key, (applied.get(key) ?? 0) + 1);
      return { invocations: applied.get(key) ?? 0 };
    },
  };
  const gated: GatedTools = {
    pay: {
      description: 'Pays an amount to a payee',
      input: z.object({ amount: z.number().int(), payee: z.string() }),
      run: async (input, context) => {
        await context.effects.apply(context.key, 'pay', input);
        return `paid ${(input as { amount: number }).amount}`;
      },
    },
  };
  return { applied, effects, gated };
}

/** The payment rules: under 50 allowed, over 1,000 two of finance, a payee list. */
export const PAYMENT_RULES = `
@id("pay-small") @reason("payments under 50 need nobody")
permit (principal, action == Action::"pay", resource) when { context.input.amount < 50 };

@id("pay-over-1000") @reason("payments over 1,000 need two of finance")
@ask @audience("finance") @quorum("2") @deadline("1h") @default("decline") @requesterMayNotAnswer
permit (principal, action == Action::"pay", resource) when { context.input.amount > 1000 };

@id("payee-list") @reason("the payee is not on the list")
forbid (principal, action == Action::"pay", resource)
when { !(["acme", "globex"].contains(context.input.payee)) };
`;

/** A model that makes one call, then answers with the last tool result's text. */
export function oneCallModel(
  name: string,
  input: JsonValue,
  id = 'tu1',
): Model & { seen: string[] } {
  const seen: string[] = [];
  let calls = 0;
  return {
    id: 'test:one-call',
    seen,
    async generate(request: ModelRequest): Promise<AssistantMessage> {
      if (calls++ === 0) {
        return assistantMessage({ type: 'tool_use', id, name, input });
      }
      const [result] = toolResults(request.messages.at(-1) as Message);
      const text = typeof result?.content === 'string' ? result.content : '';
      seen.push(text);
      return assistantMessage(`done: ${text}`);
    },
  };
}

/**
 * Registers the policy decisions' tests on one target kind, through the package's public
 * API: allow, deny and ask decided by a Cedar set, each recorded in the database and in the
 * signed audit chain.
 */
export async function describePolicyOn(kind: SqlTarget['kind']): Promise<void> {
  for (const spec of (await sqlTargets()).filter((t) => t.kind === kind)) {
    describe.skipIf(spec.skip)(`policy decisions on ${spec.kind}`, () => {
      let target: SqlTarget;
      let storage: ExecutiveStorage;
      let policies: PolicySet;
      const pay = payments();
      const flow = () => ({ storage, events: { wants: () => false, record: async () => {} } });
      beforeAll(async () => {
        target = await spec.open();
        await migrate(target.db);
        storage = sqlExecutiveStorage(target.db, {
          queue: { synchronousClaim: true },
          auditKey: () => AUDIT_KEY,
        });
        policies = loadPolicySet({
          tools: policyToolsOf(pay.gated),
          sources: [{ name: 'payments.cedar', text: PAYMENT_RULES }],
        });
      });
      afterAll(() => target?.close());

      /** Runs one turn whose model calls `pay` with `input` (call id `callId`), through the policy gate. */
      async function turnPaying(
        input: JsonValue,
        requester = 'ada',
        run = { runId: fresh('r'), conversationId: fresh('c') },
        more: Partial<PolicyGateOptions> = {},
        callId = 'tu1',
      ) {
        const model = oneCallModel('pay', input, callId);
        const outcome = await runTurn(
          model,
          [userMessage('pay')],
          { event: () => {} },
          {
            system: '',
            tools: {},
            gated: pay.gated,
            gate: policyGate({
              policies,
              storage,
              run,
              requester,
              gated: pay.gated,
              effects: pay.effects,
              ...more,
            }),
          },
        );
        return { run, model, outcome };
      }

      async function policyAudit(runId: string): Promise<AuditEntry[]> {
        const entries: AuditEntry[] = [];
        for await (const entry of exportAudit(target.db, { chain: 'policy' })) {
          if ((entry.data as { runId?: string }).runId === runId) entries.push(entry);
        }
        return entries;
      }

      it('allows a small payment with no person: it runs once, its decision and result recorded and audited', async () => {
        const { run, model, outcome } = await turnPaying({ amount: 20, payee: 'acme' });
        expect(outcome.status).toBe('completed');
        expect(model.seen).toEqual(['paid 20']);
        expect(pay.applied.get(keyOf(run.runId, { amount: 20, payee: 'acme' }))).toBe(1);
        const [decision, ...more] = await decisionsOf(target.db, run.runId);
        expect(more).toEqual([]);
        expect(decision).toMatchObject({
          outcome: 'allow',
          tool: 'pay',
          toolCallId: 'tu1',
          reason: 'rule "pay-small": payments under 50 need nobody',
          ruleIds: ['pay-small'],
          policyHash: policies.hash,
          token: null,
          arguments: { amount: 20, payee: 'acme' },
          requester: 'ada',
        });
        const recorded = await storage
          .gatedResults()
          .result(keyOf(run.runId, { amount: 20, payee: 'acme' }));
        expect(recorded?.result).toBe('paid 20');
        const audit = await policyAudit(run.runId);
        expect(audit.map((e) => (e.data as { outcome: string }).outcome)).toEqual(['allow']);
      });

      it('denies a payee outside the list: the model reads why, nothing runs, the denial is recorded and audited', async () => {
        const { run, model, outcome } = await turnPaying({ amount: 20, payee: 'mallory' });
        expect(outcome.status).toBe('completed');
        expect(model.seen).toEqual([
          'Denied by policy (pay was not run): rule "payee-list": the payee is not on the list',
        ]);
        expect(pay.applied.get(keyOf(run.runId, { amount: 20, payee: 'mallory' }))).toBeUndefined();
        const decisions = await decisionsOf(target.db, run.runId);
        expect(decisions.map((d) => [d.outcome, d.ruleIds])).toEqual([['deny', ['payee-list']]]);
        expect(
          (await policyAudit(run.runId)).map((e) => (e.data as { outcome: string }).outcome),
        ).toEqual(['deny']);
      });

      it('keeps the decision of a call its turn makes again after a crash, under a new call id: one record, one run', async () => {
        for (const input of [
          { amount: 20, payee: 'acme' },
          { amount: 20, payee: 'mallory' },
        ]) {
          const run = { runId: fresh('r'), conversationId: fresh('c') };
          const first = await turnPaying(input, 'ada', run, {}, 'tu1');
          // The model called again (a crash lost the turn's end) makes the same call under another id.
          const again = await turnPaying(input, 'ada', run, {}, 'tu2');
          expect(again.model.seen).toEqual(first.model.seen);
          const decisions = await decisionsOf(target.db, run.runId);
          expect(decisions.map((d) => [d.toolCallId, d.position])).toEqual([['tu1', 1]]);
          expect(pay.applied.get(keyOf(run.runId, input))).toBe(
            input.payee === 'acme' ? 1 : undefined,
          );
          expect(await policyAudit(run.runId)).toHaveLength(1);
          // Other arguments at the same place are another call: decided and recorded anew.
          await turnPaying({ ...input, amount: 21 }, 'ada', run, {}, 'tu3');
          expect(await decisionsOf(target.db, run.runId)).toHaveLength(2);
        }
      });

      it('answers a call whose arguments do not match the schema with why, and decides, records and runs nothing', async () => {
        const { run, model } = await turnPaying({ amount: 'lots', payee: 'acme' });
        expect(model.seen[0]).toMatch(/^invalid input: .*amount/s);
        expect(
          pay.applied.get(keyOf(run.runId, { amount: 'lots', payee: 'acme' })),
        ).toBeUndefined();
        expect(await decisionsOf(target.db, run.runId)).toEqual([]);
      });

      it('asks a large payment as its rule says, shows why on the question, and records the decision with it', async () => {
        const { run, outcome } = await turnPaying({ amount: 5000, payee: 'acme' });
        expect(outcome.status).toBe('suspended');
        const token = fresh('q');
        const ids = { ...run, requester: 'ada' };
        const waiting = await recordStart(flow(), ids, { id: 'm' }, outcome, { model: 'm' });
        expect(waiting.status).toBe('waiting');
        const interactionId = waiting.status === 'waiting' ? waiting.token : token;
        const pause = await storage.pauses().getByToken(interactionId);
        expect(pause).toMatchObject({
          audience: { names: [], roles: ['finance'] },
          requester: 'ada',
          requesterMayNotAnswer: true,
          quorum: { approvals: 2 },
          deadline: { answer: { action: 'decline' } },
        });
        expect((pause.resumeContext as { policy?: unknown }).policy).toEqual({
          outcome: 'ask',
          reason: 'rule "pay-over-1000": payments over 1,000 need two of finance',
          ruleIds: ['pay-over-1000'],
          policyHash: policies.hash,
          error: null,
        });
        const decisions = await decisionsOf(target.db, run.runId);
        expect(decisions.map((d) => [d.outcome, d.token])).toEqual([['ask', interactionId]]);
        // Read back page by page (one row a page), with the unanswered question's answer null.
        const since: unknown[] = [];
        for await (const d of decisionsSince(target.db, new Date(Date.now() - 600_000), 1)) {
          if (d.runId === run.runId) since.push(d);
        }
        expect(since).toEqual([
          {
            ...decisions[0],
            arguments: { amount: 5000, payee: 'acme' },
            requester: 'ada',
            answer: null,
          },
        ]);
        expect(await decisionOfQuestion(target.db, interactionId)).toEqual(decisions[0]);
        expect(await decisionOfQuestion(target.db, fresh('no-such-question'))).toBeNull();
        const audit = await policyAudit(run.runId);
        expect(audit.map((e) => e.data)).toEqual([
          expect.objectContaining({
            event: 'policy-decision',
            outcome: 'ask',
            token: interactionId,
          }),
        ]);
        expect(pay.applied.get(keyOf(run.runId, { amount: 5000, payee: 'acme' }))).toBeUndefined();
      });

      it('an unknown tool or an annotation out of range is refused when loading, naming the rule', () => {
        const load = (text: string) => () =>
          loadPolicySet({
            tools: policyToolsOf(pay.gated),
            sources: [{ name: 'bad.cedar', text }],
          });
        expect(
          load('@id("x") @ask @quorum("0") permit (principal, action == Action::"pay", resource);'),
        ).toThrow(PolicyError);
        expect(load('permit (principal, action == Action::"wire", resource);')).toThrow(
          /bad\.cedar/,
        );
      });

      it('gives the questions known only by kind the settings their kind decides', () => {
        const byKind = loadPolicySet({
          tools: policyToolsOf(pay.gated),
          shortForm: {
            audience: { approve: ['finance'] },
            quorum: { approve: { approvals: 2, declines: 1 } },
          },
        });
        const policy = questionPolicyOf(byKind);
        expect(policy('approve')).toEqual({
          audience: ['finance'],
          quorum: { approvals: 2, declines: 1 },
        });
        expect(policy('ask_user')).toEqual({});
      });
      /** A large payment asked in a run of its own, its question recorded: the run and the token. */
      async function askedPayment(input: JsonValue, conversationId = fresh('c')) {
        const run = { runId: fresh('r'), conversationId };
        const { outcome } = await turnPaying(input, 'ada', run);
        const waiting = await recordStart(flow(), run, { id: 'm' }, outcome, { model: 'm' });
        if (waiting.status !== 'waiting') throw new Error(`not asked: ${waiting.status}`);
        return { run, token: waiting.token };
      }

      it('denies the same call again without asking once declined, from another process, within the window only', async () => {
        const { run, token } = await askedPayment({ amount: 5000, payee: 'acme' });
        const bob = { identity: { name: 'bob', roles: ['finance'] } };
        await answer(flow(), token, { action: 'decline', content: 'not now' }, bob);
        // Another process: its own storage over the same database.
        const other = sqlExecutiveStorage(target.db, { auditKey: () => AUDIT_KEY });
        const retried = { runId: fresh('r'), conversationId: run.conversationId };
        const again = await turnPaying({ amount: 5000, payee: 'acme' }, 'ada', retried, {
          storage: other,
        });
        expect(again.outcome.status).toBe('completed');
        expect(again.model.seen[0]).toMatch(
          /^Denied by policy \(pay was not run\): the same call was declined at .*; it is denied without asking until /,
        );
        expect((await decisionsOf(target.db, retried.runId)).map((d) => d.outcome)).toEqual([
          'deny',
        ]);
        // Other arguments, or no window: it is asked.
        const other1 = { runId: fresh('r'), conversationId: run.conversationId };
        const changed = await turnPaying({ amount: 5001, payee: 'acme' }, 'ada', other1);
        expect(changed.outcome.status).toBe('suspended');
        const other2 = { runId: fresh('r'), conversationId: run.conversationId };
        const unwindowed = await turnPaying({ amount: 5000, payee: 'acme' }, 'ada', other2, {
          denialWindowMs: 0,
        });
        expect(unwindowed.outcome.status).toBe('suspended');
      });

      it('asks again a call whose question was cancelled (a stopped conversation): only a decline or an expiry refuses', async () => {
        const { run } = await askedPayment({ amount: 5000, payee: 'acme' });
        await stop(flow(), run.conversationId);
        const again = { runId: fresh('r'), conversationId: run.conversationId };
        const asked = await turnPaying({ amount: 5000, payee: 'acme' }, 'ada', again);
        expect(asked.outcome.status).toBe('suspended');
      });

      it('allows a call a pre-approved scope covers where the rules ask, but never one a rule denies', async () => {
        const run = { runId: fresh('r'), conversationId: fresh('c') };
        await grantScopes(target.db, run.runId, [{ tool: 'pay', arguments: { payee: 'acme' } }]);
        const covered = await turnPaying({ amount: 5000, payee: 'acme' }, 'ada', run);
        expect(covered.model.seen).toEqual(['paid 5000']);
        const [allowed] = await decisionsOf(target.db, run.runId);
        expect(allowed?.outcome).toBe('allow');
        expect(allowed?.reason).toMatch(
          /^pre-approved at exec \(pay \{"payee":"acme"\}\), where rule "pay-over-1000"/,
        );
        const outside = await turnPaying({ amount: 5000, payee: 'globex' }, 'ada', {
          runId: run.runId,
          conversationId: run.conversationId,
        });
        expect(outside.outcome.status).toBe('suspended');
        const wide = { runId: fresh('r'), conversationId: fresh('c') };
        await grantScopes(target.db, wide.runId, [{ tool: 'pay' }]);
        const denied = await turnPaying({ amount: 5000, payee: 'mallory' }, 'ada', wide);
        expect(denied.model.seen[0]).toMatch(/rule "payee-list"/);
      });

      it('refuses too many or too long scopes and grants nothing', async () => {
        const runId = fresh('r');
        const many = Array.from({ length: 21 }, () => ({ tool: 'pay' }));
        const long = [{ tool: 'pay', arguments: { memo: 'x'.repeat(1000) } }];
        for (const grants of [many, long, [{ tool: '../pay' }]]) {
          const error = await grantScopes(target.db, runId, grants).catch((e: unknown) => e);
          expect(ExecutiveError.hasCode(error, 'usage'), String(error)).toBe(true);
        }
        expect(await grantsOf(target.db, runId)).toEqual([]);
      });

      it('fails a run past its question cap with a clear error, asking nothing more', async () => {
        const { run } = await askedPayment({ amount: 5000, payee: 'acme' });
        const error = await turnPaying({ amount: 7000, payee: 'acme' }, 'ada', run, {
          maxQuestions: 1,
        }).catch((e: unknown) => e);
        expect(ExecutiveError.hasCode(error, 'limit_reached'), JSON.stringify(error)).toBe(true);
        expect(String(error)).toMatch(/asked 1 questions, the most one run may ask \(1\)/);
        expect((await decisionsOf(target.db, run.runId)).map((d) => d.outcome)).toEqual(['ask']);
      });
    });
  }
}
