import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createTestDatabase,
  type PgBouncer,
  pgBouncerProblem,
  serverForTests,
  startPgBouncer,
  type TestDatabase,
} from '@internal/pg-test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRun } from '../src/executive/index.js';
import { modelFromId } from '../src/model/index.js';
import { openStorage } from '../src/storage/index.js';
import { finished, runCli, startCli, waitForOutput } from './run-cli.js';

const server = await serverForTests();
const missing = pgBouncerProblem();
if (missing && process.env.CI === 'true') {
  throw new Error(`CI=true but the pooler test cannot run: ${missing}`);
}
if (missing) console.log(`skipping the pooler test: ${missing}`);

describe.skipIf(!server || missing !== undefined)(
  'runner behind PgBouncer in transaction pooling mode',
  { timeout: 300_000 },
  () => {
    let database: TestDatabase;
    let bouncer: PgBouncer;
    let env: Record<string, string>;
    const scratch = mkdtempSync(path.join(tmpdir(), 'runner-pgbouncer-'));

    beforeAll(async () => {
      database = await createTestDatabase(server);
      // Fewer server connections than the three wakes' pools together.
      bouncer = await startPgBouncer(database.url, 4);
      env = { DATABASE_URL: `${bouncer.url}?pgbouncer=true` };
      const migrated = await runCli(['migrate'], { env });
      expect(migrated.code, migrated.stderr).toBe(0);
    });
    afterAll(async () => {
      rmSync(scratch, { recursive: true, force: true });
      await bouncer?.stop();
      await database?.drop();
    });

    it('exec, answer --batch and three wakes go through the pooler, each run resumed once', async () => {
      const exec = await runCli(['exec', 'Plan', '--conversation', 'pooled-0', '--json'], { env });
      expect(exec.code, exec.stderr).toBe(0);
      const tokens = [exec.events.at(-1)?.token as string];
      const storage = await openStorage({
        dataDir: scratch,
        databaseUrl: env.DATABASE_URL,
        command: 'test',
        log: () => {},
      });
      try {
        for (let i = 1; i < 12; i++) {
          const run = await startRun(storage, modelFromId('scripted:trip'), 'Plan', `pooled-${i}`, {
            event: () => {},
          });
          if (run.status !== 'waiting') throw new Error(`pooled-${i}: ${run.status}`);
          tokens.push(run.token);
        }
      } finally {
        await storage.close();
      }

      // A waiting wake says once that it polls: LISTEN does not go through the pooler.
      const waiting = startCli(['wake'], { env });
      await waitForOutput(waiting, 'no LISTEN through the pooler');
      waiting.kill('SIGINT');
      expect((await finished(waiting)).code).toBe(0);

      const file = path.join(scratch, 'answers.json');
      writeFileSync(
        file,
        JSON.stringify(tokens.map((token) => ({ token, action: 'accept', content: 'Lisbon' }))),
      );
      const answered = await runCli(['answer', '--batch', file], { env });
      expect(answered.code, answered.stderr).toBe(0);

      const wakes = await Promise.all(
        [0, 1, 2].map(() =>
          runCli(['wake', '--once', '--concurrency', '4', '--json'], {
            env: { ...env, RUNNER_DB_POOL: '4' },
          }),
        ),
      );
      for (const w of wakes) expect(w.code, w.stderr).toBe(0);
      const resumed = wakes.flatMap((w) => w.events.filter((e) => e.type === 'resumed'));
      expect(resumed.map((e) => e.token).sort()).toEqual([...tokens].sort());
      expect(resumed.every((e) => e.status === 'waiting')).toBe(true);

      const runs = await runCli(['runs', '--status', 'waiting', '--json'], { env });
      expect(runs.events).toHaveLength(12);
    });
  },
);
