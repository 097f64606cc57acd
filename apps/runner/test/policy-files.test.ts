import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from './run-cli.js';
import { storageTargets, type Where } from './storage-targets.js';

// RUNNER_POLICY's Cedar files decide each gated call and question of exec's turn, with its
// arguments, beside the question variables: a bad file is refused with its line, a deny tells
// the model why, an ask says why on the question, a pre-approved scope asks nobody; every
// decision is in the signed audit log. On the embedded default and on PostgreSQL.

const AUDIT_KEY = { RUNNER_AUDIT_KEY: 'the policy files tests key, 16+ bytes' };
const folder = mkdtempSync(path.join(tmpdir(), 'runner-policy-'));
const file = (name: string, text: string) => {
  const at = path.join(folder, name);
  writeFileSync(at, text);
  return at;
};
const BAD = file(
  'bad.cedar',
  '@id("ok") permit (principal, action == Action::"send_email", resource);\n\n@id("broken") forbid (principal, action, resource) when { context.input.amount > };\n',
);
const RULES = file(
  'rules.cedar',
  `@id("big-transfers") @reason("transfers over 1,000 are not made by agents")
forbid (principal, action == Action::"transfer_funds", resource)
when { context.input.amount.greaterThan(decimal("1000.0")) };

@id("mail-ops") @ask @reason("mail to customers is checked by ops") @audience("ops")
permit (principal, action == Action::"send_email", resource);
`,
);

const targets = await storageTargets(AUDIT_KEY);

for (const target of targets) {
  describe.skipIf(target.skip)(`RUNNER_POLICY (${target.name})`, { timeout: 300_000 }, () => {
    let where: Where;
    const cli = (args: string[], env: Record<string, string> = {}) =>
      runInProcess([...args, ...where.args], { env: { ...AUDIT_KEY, ...where.env, ...env } });
    const exec = (conversation: string, more: string[] = [], env = { RUNNER_POLICY: RULES }) =>
      cli(
        [
          'exec',
          'Pay invoice 42',
          '--model',
          'scripted:gated',
          '--conversation',
          conversation,
          '--json',
          ...more,
        ],
        env,
      );
    const decisions = async () => {
      const audit = await cli(['audit', '--json']);
      return audit.events
        .filter((e) => e.type === 'audit-entry' && e.chain === 'policy')
        .map((e) => e.data as Record<string, unknown>);
    };
    beforeAll(async () => {
      where = await target.setUp();
    });
    afterAll(() => where?.drop());

    it('refuses a file that does not parse with its file, line and Cedar message, and writes nothing', async () => {
      const refused = await exec('bad', [], { RUNNER_POLICY: BAD });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`${BAD}:3:`);
      expect(refused.stderr).toMatch(/unexpected token/);
      const shown = await cli(['show', 'bad', '--json']);
      expect(shown.code).not.toBe(0);
    });

    it('denies what a rule forbids (the model is told why) and asks what a rule asks, saying why', async () => {
      const started = await exec('denied');
      expect(started.code, started.stderr).toBe(0);
      const waiting = started.events.find((e) => e.type === 'run-waiting');
      expect(waiting).toBeDefined();
      const made = await decisions();
      expect(
        made
          .filter((d) => d.conversationId === 'denied')
          .map((d) => [d.tool, d.outcome, d.ruleIds]),
      ).toEqual([
        ['transfer_funds', 'deny', ['big-transfers']],
        ['send_email', 'ask', ['mail-ops']],
      ]);
      const listed = await cli(['paused-states', 'list']);
      expect(listed.stdout).toContain(
        'asked because rule "mail-ops": mail to customers is checked by ops',
      );
      const json = await cli(['paused-states', 'list', '--json']);
      const pause = json.events.find((e) => e.token === waiting?.token);
      expect(pause).toMatchObject({ audience: { roles: ['ops'] } });
    });

    it('asks nobody for a call a pre-approved scope covers, and refuses scopes out of range', async () => {
      const started = await exec('granted', [
        '--pre-approve',
        'send_email={"to":"billing@atlas.example"}',
      ]);
      expect(started.code, started.stderr).toBe(0);
      expect(started.events.find((e) => e.type === 'run-waiting')).toBeUndefined();
      const made = (await decisions()).filter((d) => d.conversationId === 'granted');
      expect(made.map((d) => [d.tool, d.outcome])).toEqual([
        ['transfer_funds', 'deny'],
        ['send_email', 'allow'],
      ]);
      expect(String(made[1]?.reason)).toMatch(/^pre-approved at exec/);
      const many = Array.from({ length: 21 }, () => ['--pre-approve', 'send_email']).flat();
      for (const bad of [many, ['--pre-approve', 'send_email={not json']]) {
        const refused = await exec('refused', bad);
        expect(refused.code, refused.stderr).toBe(2);
      }
      expect((await decisions()).filter((d) => d.conversationId === 'refused')).toEqual([]);
    });
  });
}
