import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../src/storage/index.js';
import { runInProcess } from './run-cli.js';
import { storageTargets, type Where } from './storage-targets.js';

// `runner policy replay FILE`: every recorded decision decided again with a candidate set, next
// to what people answered, over 10,000 recorded decisions, on the embedded default and PostgreSQL.

const folder = mkdtempSync(path.join(tmpdir(), 'runner-policy-replay-'));
const file = (name: string, text: string) => {
  const at = path.join(folder, name);
  writeFileSync(at, text);
  return at;
};
const ACTIVE = file(
  'active.cedar',
  `@id("mail-ops") @ask @reason("mail to customers is checked by ops") @audience("ops")
permit (principal, action == Action::"send_email", resource);
`,
);
const CANDIDATE = file(
  'candidate.cedar',
  `@id("transfers-any") @reason("transfers need nobody")
permit (principal, action == Action::"transfer_funds", resource);
`,
);
const NOT_CEDAR = file('candidate.json', '{"policies": ["allow everything"]}\n');
const RECORDED = 10_000;

const targets = await storageTargets();

for (const target of targets) {
  describe.skipIf(target.skip)(
    `runner policy replay (${target.name})`,
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
            'replayed',
            '--json',
          ],
          { RUNNER_POLICY: ACTIVE },
        );
        expect(started.code, started.stderr).toBe(0);
        token = started.events.find((e) => e.type === 'run-waiting')?.token as string;
        const declined = await cli(['answer', token, '--decline', 'not this one']);
        expect(declined.code, declined.stderr).toBe(0);
        const dataDir = where.args[1] ?? folder;
        const storage = await openStorage({
          dataDir,
          ...(where.env.DATABASE_URL ? { databaseUrl: where.env.DATABASE_URL } : {}),
          command: 'the test',
          log: () => {},
        });
        try {
          // The exec's one recorded question, copied 10,000 times in one statement, and one
          // row as recorded before the arguments were kept.
          await storage.db.execute(sql`insert into x_executive.policy_decisions
            (id, run_id, conversation_id, tool, tool_call_id, arguments_digest, arguments, requester,
             outcome, reason, rule_ids, policy_hash, error, token, decided_at)
            select 'copy-' || n, run_id, conversation_id, tool, 'call-' || n, arguments_digest,
              case when n = 0 then null else arguments end, requester, outcome, reason, rule_ids,
              policy_hash, error, null, decided_at
            from x_executive.policy_decisions, generate_series(0, ${RECORDED - 1}) as n
            where outcome = 'ask'`);
        } finally {
          await storage.close();
        }
      });
      afterAll(() => where?.drop());

      it('says how many asked calls the candidate would allow, what changes, what cannot be replayed, and the time', async () => {
        const replayed = await cli(['policy', 'replay', CANDIDATE, '--since', '1d']);
        expect(replayed.code, replayed.stderr).toBe(0);
        const lines = replayed.stdout.trimEnd().split('\n');
        const asked = RECORDED; // the exec's question and 9,999 copies with their arguments
        expect(lines[0]).toBe(
          `would allow ${asked} of ${asked} asked calls; people declined 1 of those ${asked}:`,
        );
        expect(lines[1]).toMatch(
          new RegExp(
            `^ {2}${token} transfer_funds \\{.*"amount":1240.*\\}: ask, people: decline -> allow \\(.*transfers need nobody\\)$`,
          ),
        );
        expect(lines[2]).toMatch(
          new RegExp(`^${asked} outcomes of ${asked} decisions since \\d{4}-.+ would change:$`),
        );
        expect(lines).toContain('  ... and 9980 more (--json lists them all)');
        expect(lines).toContain(
          '1 decision not replayable (recorded before @x/executive migration 0002_policy_decision_calls, without their arguments)',
        );
        expect(lines.at(-1)).toMatch(/^candidate .*candidate\.cedar \(sha256:\w+\); took \d+ ms$/);

        const json = await cli(['policy', 'replay', CANDIDATE, '--json']);
        expect(json.code, json.stderr).toBe(0);
        expect(json.events[0]).toMatchObject({
          type: 'policy-replayed',
          decided: asked,
          asked,
          askedNowAllowed: asked,
          notReplayable: 1,
          tookMs: expect.any(Number),
        });
      });

      it('replays nothing older than --since', async () => {
        const replayed = await cli(['policy', 'replay', ACTIVE, '--since', '0s', '--json']);
        expect(replayed.code, replayed.stderr).toBe(0);
        expect(replayed.events[0]).toMatchObject({ decided: 0, asked: 0, changes: [] });
      });

      it('refuses a file that is not Cedar, and an age that is none, with exit 2', async () => {
        const refused = await cli(['policy', 'replay', NOT_CEDAR]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain('candidate.json');
        const badAge = await cli(['policy', 'replay', CANDIDATE, '--since', 'a month']);
        expect(badAge.code).toBe(2);
        expect(badAge.stderr).toContain('--since takes an age like 30d or 12h, not "a month"');
      });
    },
  );
}
