import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from './run-cli.js';
import { storageTargets, type Where } from './storage-targets.js';

// `runner policy load FILES` (a new version with no restart; a question keeps the version
// that asked it) and RUNNER_POLICY_SHADOW with `runner policy shadow` (the candidate's
// disagreements), end to end on the embedded default and on PostgreSQL.

const AUDIT_KEY = { RUNNER_AUDIT_KEY: 'the policy load tests key, 16+ bytes' };
const folder = mkdtempSync(path.join(tmpdir(), 'runner-policy-load-'));
const file = (name: string, text: string) => {
  const at = path.join(folder, name);
  writeFileSync(at, text);
  return at;
};
const NO_TRANSFERS =
  '@id("no-transfers") forbid (principal, action == Action::"transfer_funds", resource);\n';
const V1 = file(
  'v1.cedar',
  `${NO_TRANSFERS}@id("mail-v1") @ask @reason("v1: mail is checked by ops") @audience("ops")
permit (principal, action == Action::"send_email", resource);
`,
);
const V2 = file(
  'v2.cedar',
  `${NO_TRANSFERS}@id("mail-v2") @ask @reason("v2: mail is checked by finance") @audience("finance")
permit (principal, action == Action::"send_email", resource);
`,
);
const CANDIDATE = file(
  'candidate.cedar',
  `${NO_TRANSFERS}@id("mail-free") @reason("mail needs nobody")
permit (principal, action == Action::"send_email", resource);
`,
);
const BAD = file(
  'bad.cedar',
  `${NO_TRANSFERS}\n@id("broken") permit (principal, action, resource) when { };\n`,
);

const targets = await storageTargets(AUDIT_KEY);

for (const target of targets) {
  describe.skipIf(target.skip)(
    `runner policy load and shadow (${target.name})`,
    { timeout: 300_000 },
    () => {
      let where: Where;
      const cli = (args: string[], env: Record<string, string> = {}) =>
        runInProcess([...args, ...where.args], { env: { ...AUDIT_KEY, ...where.env, ...env } });
      const exec = async (conversation: string, env: Record<string, string> = {}) => {
        const args = ['exec', 'Pay invoice 42', '--model', 'scripted:gated'];
        const started = await cli([...args, '--conversation', conversation, '--json'], env);
        expect(started.code, started.stderr).toBe(0);
        return started.events.find((e) => e.type === 'run-waiting')?.token as string;
      };
      const explain = async (token: string) => {
        const shown = await cli(['policy', 'explain', token]);
        expect(shown.code, shown.stderr).toBe(0);
        return shown.stdout;
      };
      const load = async (...files: string[]) => {
        const loaded = await cli(['policy', 'load', ...files, '--json']);
        expect(loaded.code, loaded.stderr).toBe(0);
        return loaded.events[0] as unknown as { version: number; policyHash: string };
      };

      beforeAll(async () => {
        where = await target.setUp();
      });
      afterAll(() => where?.drop());

      it('decides with each loaded version from the next question on; an asked question keeps its version; a bad file changes nothing', async () => {
        const v1 = await load(V1);
        expect(v1.version).toBe(1);
        const first = await exec('loaded-1');
        const v2 = await load(V2);
        expect(v2).toMatchObject({ version: 2 });
        const explained = await explain(first);
        expect(explained).toContain(`policy set: ${v1.policyHash} (version 1, loaded by `);
        expect(explained).toContain(`rule "mail-v1" (ask, ${V1}:2): v1: mail is checked by ops`);
        const refused = await cli(['policy', 'load', BAD]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain(`${BAD}:3:`);
        const second = await exec('loaded-2');
        const now = await explain(second);
        expect(now).toContain(`policy set: ${v2.policyHash} (version 2, loaded by `);
        expect(now).toContain('matching rules: "mail-v2"');
        const audit = await cli(['audit', '--json']);
        const loads = audit.events
          .filter((e) => e.type === 'audit-entry' && e.chain === 'policy')
          .map((e) => e.data as { event: string; version?: number })
          .filter((data) => data.event === 'policy-loaded');
        expect(loads.map((data) => data.version)).toEqual([1, 2]);
      });

      it('records the candidate of RUNNER_POLICY_SHADOW beside each decision and lists where it disagrees', async () => {
        const bad = await cli(['exec', 'Pay invoice 42', '--model', 'scripted:gated'], {
          RUNNER_POLICY_SHADOW: BAD,
        });
        expect(bad.code).toBe(2);
        expect(bad.stderr).toContain('RUNNER_POLICY_SHADOW');
        expect(bad.stderr).toContain(`${BAD}:3:`);
        const token = await exec('shadowed', { RUNNER_POLICY_SHADOW: CANDIDATE });
        const listed = await cli(['policy', 'shadow', '--since', '1h']);
        expect(listed.code, listed.stderr).toBe(0);
        const lines = listed.stdout.split('\n');
        expect(lines[0]).toMatch(/^1 disagreement of the candidate policies since /);
        expect(lines.slice(1)).toEqual([
          expect.stringMatching(/^ {2}\S+ run \S+ send_email \{.*\}$/),
          '    active: ask (rule "mail-v2": v2: mail is checked by finance)',
          '    candidate: allow (rule "mail-free": mail needs nobody)',
          '    people: not answered yet',
          '',
        ]);
        const json = await cli(['policy', 'shadow', '--json']);
        expect(json.events[0]).toMatchObject({
          type: 'policy-shadow',
          disagreements: [{ token, outcome: 'ask', shadow: { outcome: 'allow' } }],
        });
        const wrong = await cli(['policy', 'shadow', '--since', 'soon']);
        expect(wrong.code).toBe(2);
      });
    },
  );
}
