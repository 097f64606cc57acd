import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PauseView, PoliciesResponse } from '@x/approval-center';
import { policiesResponseSchema } from '@x/approval-center/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from './run-cli.js';
import { call, type Served, serve } from './serve-harness.js';
import { storageTargets, type Where } from './storage-targets.js';

// `GET /api/policies` of runner serve: the active policy set (RUNNER_POLICY's), its rules hard
// or soft with their annotations, and what each decided in the last 7 days; on the embedded
// default and PostgreSQL.

const folder = mkdtempSync(path.join(tmpdir(), 'runner-policies-api-'));
const RULES = path.join(folder, 'payments.cedar');
writeFileSync(
  RULES,
  `@id("big-transfers") @reason("transfers over 1,000 need two of finance")
@ask @audience("finance+@ada") @quorum("2") @deadline("1h") @default("decline") @requesterMayNotAnswer
permit (principal, action == Action::"transfer_funds", resource) when { context.input.amount.greaterThan(decimal("1000.0")) };

@id("invoice-7") @reason("invoice 7 is disputed")
forbid (principal, action == Action::"transfer_funds", resource)
when { context.input has reference && context.input.reference like "*invoice 7" };

@id("mail") @reason("mail needs nobody")
permit (principal, action == Action::"send_email", resource);

@id("no-gbp") @reason("no transfers in pounds")
forbid (principal, action == Action::"transfer_funds", resource) when { context.input.currency == "GBP" };
`,
);

// A candidate run in shadow that would refuse every transfer outright.
const CANDIDATE = path.join(folder, 'candidate.cedar');
writeFileSync(
  CANDIDATE,
  `@id("no-transfers") @reason("no transfers at all")
forbid (principal, action == Action::"transfer_funds", resource);

@id("mail") @reason("mail needs nobody")
permit (principal, action == Action::"send_email", resource);
`,
);

const targets = await storageTargets();

for (const target of targets) {
  describe.skipIf(target.skip)(`GET /api/policies (${target.name})`, { timeout: 300_000 }, () => {
    let where: Where;
    let served: Served | undefined;
    const env = () => ({ ...where.env, RUNNER_POLICY: RULES });
    const exec = async (goal: string, conversation: string) => {
      const args = ['exec', goal, '--model', 'scripted:gated', '--conversation', conversation];
      const ran = await runInProcess([...args, '--json', ...where.args], { env: env() });
      expect(ran.code, ran.stderr).toBe(0);
      return ran.events;
    };
    const api = (p: string) => new URL(p, served?.url).toString();

    beforeAll(async () => {
      where = await target.setUp();
      // Asked: a transfer of 1,240. Denied: invoice 7's transfer; then its email is allowed.
      const asked = await exec('Pay invoice 42', 'policies-asked');
      expect(asked.some((e) => e.type === 'run-waiting')).toBe(true);
      const denied = await exec('Pay invoice 7', 'policies-denied');
      expect(denied.some((e) => e.type === 'run-completed')).toBe(true);
      served = await serve(['--no-wake', '--operator', 'ada', ...where.args], env());
    });
    afterAll(async () => {
      if (served) expect(await served.stop()).toBe(0);
      await where?.drop();
    });

    it('shows the active set, its rules hard or soft with their annotations, and what each decided', async () => {
      const got = await call(api('/api/policies'));
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      const body: PoliciesResponse = policiesResponseSchema.parse(got.body);
      expect(body.days).toBe(7);
      expect(Date.parse(body.since)).toBeLessThan(Date.now() - 6 * 86_400_000);
      expect(body.policySet.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      const rules = Object.fromEntries(body.policySet.rules.map((rule) => [rule.id, rule]));
      expect(rules['big-transfers']).toEqual({
        id: 'big-transfers',
        outcome: 'ask',
        denial: 'soft',
        reason: 'transfers over 1,000 need two of finance',
        audience: { names: ['ada'], roles: ['finance'] },
        quorum: { approvals: 2, declines: 1 },
        deadline: { ms: 3_600_000, answer: { action: 'decline', content: '' } },
        remindMs: null,
        escalate: null,
        requesterMayNotAnswer: true,
        severity: null,
        location: { file: RULES, line: 1 },
        decided: { allow: 0, deny: 0, ask: 1 },
      });
      expect(rules['invoice-7']).toMatchObject({
        outcome: 'deny',
        denial: 'hard',
        audience: null,
        decided: { allow: 0, deny: 1, ask: 0 },
      });
      expect(rules.mail).toMatchObject({
        outcome: 'allow',
        denial: null,
        decided: { allow: 1, deny: 0, ask: 0 },
      });
      expect(rules['no-gbp']).toMatchObject({
        denial: 'hard',
        decided: { allow: 0, deny: 0, ask: 0 },
      });
      expect(body.otherRules).toEqual([]);
      expect(body.withoutRule).toEqual({ allow: 0, deny: 0, ask: 0 });
      // No candidate set runs in shadow: the page shows no shadow section.
      expect(body.shadow).toBeNull();

      // The question shows why it was asked, by the same set.
      const pauses = (await call(api('/api/pauses'))).body.pauses as PauseView[];
      const asked = pauses.find((p) => p.conversationId === 'policies-asked');
      expect(asked?.policy).toEqual({
        outcome: 'ask',
        reason: 'rule "big-transfers": transfers over 1,000 need two of finance',
        ruleIds: ['big-transfers'],
        policyHash: body.policySet.hash,
        error: null,
      });
    });

    it('counts the days asked for, and refuses a bad ?days= or a write', async () => {
      const one = await call(api('/api/policies?days=1'));
      expect(one.body.days).toBe(1);
      expect(
        one.body.policySet.rules.find((r: { id: string }) => r.id === 'mail').decided.allow,
      ).toBe(1);
      for (const days of ['0', '91', '1.5', 'week']) {
        const bad = await call(api(`/api/policies?days=${days}`));
        expect(bad.status).toBe(400);
        expect(bad.body.error.code).toBe('invalid_request');
      }
      const posted = await call(api('/api/policies'), { method: 'POST' });
      expect(posted.status).toBe(405);
      expect(posted.headers.get('allow')).toBe('GET, HEAD');
    });

    it('lists where a candidate run in shadow disagreed, beside what the active set decided', async () => {
      // The embedded default's serve holds the data folder: this exec runs with serve stopped.
      expect(await served?.stop()).toBe(0);
      served = undefined;
      const shadowEnv = { ...env(), RUNNER_POLICY_SHADOW: CANDIDATE };
      const args = ['exec', 'Pay invoice 42', '--model', 'scripted:gated'];
      const ran = await runInProcess(
        [...args, '--conversation', 'policies-shadow', '--json', ...where.args],
        {
          env: shadowEnv,
        },
      );
      expect(ran.code, ran.stderr).toBe(0);
      const shadowServed = await serve(
        ['--no-wake', '--operator', 'ada', ...where.args],
        shadowEnv,
      );
      try {
        const { body } = await call(new URL('/api/policies', shadowServed.url).toString());
        expect(policiesResponseSchema.parse(body)).toEqual(body);
        const found = (body as PoliciesResponse).shadow?.disagreements ?? [];
        expect(found.map((d) => [d.conversationId, d.tool])).toEqual([
          ['policies-shadow', 'transfer_funds'],
        ]);
        expect(found[0]?.active).toMatchObject({ outcome: 'ask', ruleIds: ['big-transfers'] });
        expect(found[0]?.candidate).toMatchObject({
          outcome: 'deny',
          ruleIds: ['no-transfers'],
          error: null,
        });
        expect(found[0]?.answer).toBeNull();
      } finally {
        expect(await shadowServed.stop()).toBe(0);
      }
    });
  });
}
