import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from './run-cli.js';
import { storageTargets, type Where } from './storage-targets.js';

// `runner policy explain TOKEN`: how a question's decision was reached (its outcome, reason,
// matching rules with what they set, the set's hash), on the embedded default and PostgreSQL.

const folder = mkdtempSync(path.join(tmpdir(), 'runner-policy-explain-'));
const file = (name: string, text: string) => {
  const at = path.join(folder, name);
  writeFileSync(at, text);
  return at;
};
const RULES = file(
  'rules.cedar',
  `@id("no-transfers") @reason("agents make no transfers")
forbid (principal, action == Action::"transfer_funds", resource);

@id("mail-ops") @ask @reason("mail to customers is checked by ops") @audience("ops") @quorum("2")
permit (principal, action == Action::"send_email", resource);
`,
);
const OTHER = file(
  'other.cedar',
  `@id("no-transfers") forbid (principal, action == Action::"transfer_funds", resource);
@id("mail-any") @ask @reason("mail is checked") permit (principal, action == Action::"send_email", resource);
`,
);

const targets = await storageTargets();

for (const target of targets) {
  describe.skipIf(target.skip)(
    `runner policy explain (${target.name})`,
    { timeout: 300_000 },
    () => {
      let where: Where;
      let token: string;
      const cli = (args: string[], env: Record<string, string> = {}) =>
        runInProcess([...args, ...where.args], { env: { ...where.env, ...env } });

      beforeAll(async () => {
        where = await target.setUp();
        const started = await cli(
          [
            'exec',
            'Pay invoice 42',
            '--model',
            'scripted:gated',
            '--conversation',
            'explained',
            '--json',
          ],
          { RUNNER_POLICY: RULES },
        );
        expect(started.code, started.stderr).toBe(0);
        token = started.events.find((e) => e.type === 'run-waiting')?.token as string;
        expect(token).toBeDefined();
      });
      afterAll(() => where?.drop());

      it('shows the outcome, the reason, the matching rules with what they set and the set', async () => {
        const shown = await cli(['policy', 'explain', token], { RUNNER_POLICY: RULES });
        expect(shown.code, shown.stderr).toBe(0);
        const lines = shown.stdout.split('\n');
        expect(lines[0]).toMatch(new RegExp(`^question ${token}: ask, \\d{4}-`));
        expect(lines.slice(1)).toEqual([
          '  reason: rule "mail-ops": mail to customers is checked by ops',
          expect.stringMatching(
            /^ {2}call: send_email \(.+\), run .+, arguments sha256:[0-9a-f]{64}$/,
          ),
          expect.stringMatching(/^ {2}policy set: sha256:\w+ \(the active one\)$/),
          '  matching rules: "mail-ops"',
          `  rule "mail-ops" (ask, ${RULES}:4): mail to customers is checked by ops`,
          '    audience {"names":[],"roles":["ops"]}',
          '    quorum {"approvals":2,"declines":1}',
          '',
        ]);
      });

      it('says when the set that decided is not the active one, and refuses an unknown token', async () => {
        const other = await cli(['policy', 'explain', token, '--json'], { RUNNER_POLICY: OTHER });
        expect(other.code, other.stderr).toBe(0);
        const [explained] = other.events;
        expect(explained).toMatchObject({
          type: 'policy-explained',
          decision: { outcome: 'ask', ruleIds: ['mail-ops'], token },
          rules: [],
        });
        expect(explained?.activeHash).not.toBe(
          (explained?.decision as { policyHash: string } | undefined)?.policyHash,
        );
        const unknown = await cli(['policy', 'explain', 'no-such-token']);
        expect(unknown.code).toBe(3);
        expect(unknown.stderr).toContain('no policy decision asked question no-such-token');
      });
    },
  );
}
