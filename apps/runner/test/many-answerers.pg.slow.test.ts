import { createTestDatabase, serverForTests, type TestDatabase } from '@internal/pg-test';
import { afterAll, describe, expect, it } from 'vitest';
import { openStorage } from '../src/storage/index.js';
import { call, dataDirs, json, run, serve } from './serve-harness.js';

// 20 operators answer one question at once through `runner serve`, each with their own key:
// one answer wins, the other 19 are told it was answered already, and the audit log holds
// exactly that, naming each operator; on the embedded default and on PostgreSQL.

const server = await serverForTests();
const newDataDir = dataDirs();
const OPERATORS = Array.from({ length: 20 }, (_, i) => `op${String(i + 1).padStart(2, '0')}`);

interface Target {
  name: string;
  skip: boolean;
  setUp(): Promise<{
    args: string[];
    env: Record<string, string>;
    dataDir: string;
    databaseUrl?: string;
    drop(): Promise<void>;
  }>;
}

const targets: Target[] = [
  {
    name: 'embedded',
    skip: false,
    setUp: async () => {
      const dataDir = newDataDir();
      return { args: ['--data', dataDir], env: {}, dataDir, drop: async () => {} };
    },
  },
  {
    name: 'postgres',
    skip: !server,
    setUp: async () => {
      const database: TestDatabase = await createTestDatabase(server);
      return {
        args: [],
        env: { DATABASE_URL: database.url, RUNNER_AUDIT_KEY: 'twenty operators, one answer' },
        dataDir: newDataDir(),
        databaseUrl: database.url,
        drop: () => database.drop(),
      };
    },
  },
];

for (const target of targets) {
  describe.skipIf(target.skip)(`20 operators, one question (${target.name})`, () => {
    const drops: Array<() => Promise<void>> = [];
    afterAll(async () => {
      for (const drop of drops) await drop();
    });

    it('one answer wins, 19 get already answered, and the audit log holds exactly that', {
      timeout: 300_000,
    }, async () => {
      const where = await target.setUp();
      drops.push(where.drop);
      const cli = (args: string[]) => run([...args, '--json', ...where.args], where.env);
      const started = await cli(['exec', 'Plan a trip', '--conversation', 'crowd']);
      expect(started.code, started.stderr).toBe(0);
      const token = started.events.find((e) => e.type === 'run-waiting')?.token as string;

      // Twenty processes of `operators add` would take minutes here: the store adds them.
      const storage = await openStorage({
        dataDir: where.dataDir,
        databaseUrl: where.databaseUrl,
        command: 'the test',
        log: () => {},
      });
      const keys = new Map<string, string>();
      try {
        for (const name of OPERATORS) keys.set(name, (await storage.operators().add(name, [])).key);
      } finally {
        await storage.close();
      }

      const served = await serve(where.args, where.env);
      let responses: Array<{ name: string; status: number; code: string | undefined }>;
      try {
        const url = new URL(`/api/pauses/${token}/answer`, served.url).toString();
        responses = await Promise.all(
          OPERATORS.map(async (name) => {
            const body = json({ action: 'accept', content: `Lisbon, says ${name}` });
            const answered = await call(url, {
              ...body,
              headers: { ...body.headers, authorization: `Bearer ${keys.get(name)}` },
            });
            return { name, status: answered.status, code: answered.body?.error?.code };
          }),
        );
      } finally {
        await served.stop();
      }
      const winners = responses.filter((r) => r.status === 200);
      const losers = responses.filter((r) => r.status !== 200);
      expect(winners, JSON.stringify(responses)).toHaveLength(1);
      expect(losers.map((r) => [r.status, r.code])).toEqual(
        Array.from({ length: 19 }, () => [409, 'already_answered']),
      );
      const winner = winners[0]?.name;

      const listed = await cli(['audit', '--conversation', 'crowd']);
      expect(listed.code, listed.stderr).toBe(0);
      const entries = listed.events.filter((e) => e.type === 'audit-entry');
      const data = (e: (typeof entries)[number]) => e.data as Record<string, unknown>;
      expect(entries.filter((e) => e.kind === 'question-answered').map((e) => data(e))).toEqual([
        expect.objectContaining({ by: winner, content: `Lisbon, says ${winner}`, channel: 'api' }),
      ]);
      const refused = entries.filter((e) => e.kind === 'answer-refused').map((e) => data(e));
      expect(refused.map((d) => d.reason)).toEqual(
        Array.from({ length: 19 }, () => 'already_answered'),
      );
      expect(refused.map((d) => d.by).sort()).toEqual(losers.map((r) => r.name).sort());
      // The answers of this question, nothing else: created, one answered, 19 refused (and the
      // resume that the hosted wake loop may have run in between writes no entry of its own).
      expect(entries.filter((e) => e.token === token)).toHaveLength(21);
      const verified = await cli(['audit', 'verify']);
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    });
  });
}
