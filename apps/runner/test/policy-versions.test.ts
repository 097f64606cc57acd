import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from './run-cli.js';
import { storageTargets, type Where } from './storage-targets.js';

// `runner policy versions`: the versions `policy load` recorded, newest first, the one running
// workers decide with marked, end to end on the embedded default and on PostgreSQL.

const folder = mkdtempSync(path.join(tmpdir(), 'runner-policy-versions-'));
const file = (name: string, text: string) => {
  const at = path.join(folder, name);
  writeFileSync(at, text);
  return at;
};
const V1 = file(
  'v1.cedar',
  '@id("no-transfers") forbid (principal, action == Action::"transfer_funds", resource);\n',
);
const V2 = file(
  'v2.cedar',
  '@id("mail-free") @reason("mail needs nobody")\npermit (principal, action == Action::"send_email", resource);\n',
);

/** What `policy load --json` says of the version it recorded. */
interface Loaded {
  policyHash: string;
  loadedBy: string;
  loadedAt: string;
}

for (const target of await storageTargets()) {
  describe.skipIf(target.skip)(
    `runner policy versions (${target.name})`,
    { timeout: 300_000 },
    () => {
      let where: Where;
      const cli = (args: string[]) => runInProcess([...args, ...where.args], { env: where.env });

      beforeAll(async () => {
        where = await target.setUp();
      });
      afterAll(() => where?.drop());

      it('says none is loaded, then lists each loaded version newest first with the current one marked', async () => {
        const none = await cli(['policy', 'versions']);
        expect(none.code, none.stderr).toBe(0);
        // The last line: the first command on a fresh database says it set it up first.
        expect(none.stdout.trim().split('\n').at(-1)).toBe(
          'no policy version loaded: workers decide with RUNNER_POLICY and the question variables (`runner policy load` records one)',
        );
        const noneJson = await cli(['policy', 'versions', '--json']);
        expect(noneJson.events).toEqual([{ type: 'policy-versions', current: null, versions: [] }]);

        const loads: Loaded[] = [];
        for (const files of [[V1], [V2]]) {
          const loaded = await cli(['policy', 'load', ...files, '--json']);
          expect(loaded.code, loaded.stderr).toBe(0);
          loads.push(loaded.events[0] as unknown as Loaded);
        }
        const [v1, v2] = loads;
        const json = await cli(['policy', 'versions', '--json']);
        expect(json.code, json.stderr).toBe(0);
        expect(json.events).toEqual([
          {
            type: 'policy-versions',
            current: 2,
            versions: [
              { version: 2, ...pick(v2), files: [V2], current: true },
              { version: 1, ...pick(v1), files: [V1], current: false },
            ],
          },
        ]);
        const text = await cli(['policy', 'versions']);
        expect(text.code, text.stderr).toBe(0);
        expect(text.stdout.split('\n')).toEqual([
          '2 policy versions loaded, newest first (* the one workers decide with):',
          `* 2  ${v2?.policyHash}  ${v2?.loadedBy}  ${v2?.loadedAt}  ${V2}`,
          `  1  ${v1?.policyHash}  ${v1?.loadedBy}  ${v1?.loadedAt}  ${V1}`,
          '',
        ]);
      });

      it('takes no argument and says how it is used', async () => {
        const refused = await cli(['policy', 'versions', 'v1.cedar']);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain('policy versions takes no arguments');
        const help = await cli(['policy', 'versions', '--help']);
        expect(help.code).toBe(0);
        expect(help.stdout).toContain('runner policy versions [--json]');
      });
    },
  );
}

function pick(loaded: Loaded | undefined) {
  return { policyHash: loaded?.policyHash, loadedBy: loaded?.loadedBy, loadedAt: loaded?.loadedAt };
}
