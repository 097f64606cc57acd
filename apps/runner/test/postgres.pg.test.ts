import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, serverForTests, type TestDatabase } from '@internal/pg-test';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRun } from '../src/executive/index.js';
import { modelFromId } from '../src/model/index.js';
import { openStorage } from '../src/storage/index.js';
import { finished, runCli, runInProcess, startCli, waitForOutput } from './run-cli.js';
import { expectPaired } from './transcript.js';

const server = await serverForTests();

/** Polls `check` until it holds (at most a minute). */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}
const last = <T>(list: T[]): T => list[list.length - 1] as T;

describe.skipIf(!server)('runner on a PostgreSQL server', { timeout: 300_000 }, () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  const scratch = mkdtempSync(path.join(tmpdir(), 'runner-pg-'));

  beforeAll(async () => {
    database = await createTestDatabase(server);
    env = { DATABASE_URL: database.url };
    const migrated = await runInProcess(['migrate'], { env });
    expect(migrated.code, migrated.stderr).toBe(0);
  });
  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await database?.drop();
  });

  const exec = async (conversation: string, extra: string[] = []) => {
    const run = await runInProcess(
      ['exec', 'Plan', '--conversation', conversation, '--json', ...extra],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    return last(run.events);
  };

  it('exec → answer → wake --once → completed, with every tool_use answered once', async () => {
    let step = await exec('pg-1');
    for (const answer of [
      ['--option', '1'],
      ['--accept', '3'],
      ['--accept', 'ok'],
    ]) {
      expect((await runInProcess(['answer', step.token as string, ...answer], { env })).code).toBe(
        0,
      );
      const woke = await runInProcess(['wake', '--once', '--json'], { env });
      expect(woke.code, woke.stderr).toBe(0);
      step = last(woke.events);
    }
    expect(step.type).toBe('run-completed');
    expectPaired(step.messages);
  });

  it('a wake killed during the resumed model call is completed by the next wake, once', async () => {
    const waiting = await exec('pg-kill');
    await runInProcess(['answer', waiting.token as string, '--option', '3'], { env });
    const slow = startCli(['wake', '--once', '--json'], {
      env: { ...env, RUNNER_SCRIPTED_DELAY_MS: '60000', RUNNER_LEASE_MS: '1000' },
    });
    await waitForOutput(slow, '"type":"model-call"');
    slow.kill('SIGKILL');
    const killed = await finished(slow);
    expect(killed.events.filter((e) => e.type === 'resumed')).toHaveLength(0);
    // The run stays with the killed worker until its lease runs out, then anyone may take it.
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await until(async () => {
        const [run] =
          await sql`select claimable_at < now() as due from x_continuation.runs where conversation_id = 'pg-kill'`;
        return run?.due === true;
      });
    } finally {
      await sql.end();
    }

    const second = await runInProcess(['wake', '--once', '--json'], { env });
    expect(second.code, second.stderr).toBe(0);
    // One model call for the resume (the killed one made one more that never finished).
    expect(second.events.filter((e) => e.type === 'model-call')).toHaveLength(1);
    expect(second.events.filter((e) => e.type === 'resumed')).toEqual([
      expect.objectContaining({ token: waiting.token, status: 'waiting', attempt: 2 }),
    ]);
    const third = await runInProcess(['wake', '--once', '--json'], { env });
    expect(third.events.filter((e) => e.type === 'resumed')).toHaveLength(0);
  });

  it('three wake processes and 50 answered pauses: every pause is resumed exactly once', async () => {
    // The waiting runs are made in process: what is under test here is the wakes.
    const storage = await openStorage({
      dataDir: scratch,
      databaseUrl: database.url,
      command: 'test',
      log: () => {},
    });
    const tokens: string[] = [];
    try {
      for (let i = 0; i < 50; i++) {
        const run = await startRun(storage, modelFromId('scripted:trip'), 'Plan', `many-${i}`, {
          event: () => {},
        });
        if (run.status !== 'waiting') throw new Error(`many-${i}: ${run.status}`);
        tokens.push(run.token);
      }
    } finally {
      await storage.close();
    }
    const file = path.join(scratch, 'answers.json');
    writeFileSync(
      file,
      JSON.stringify(tokens.map((token) => ({ token, action: 'accept', content: 'Lisbon' }))),
    );
    expect((await runInProcess(['answer', '--batch', file], { env })).code).toBe(0);

    const wakes = await Promise.all(
      [0, 1, 2].map(() => runCli(['wake', '--once', '--concurrency', '2', '--json'], { env })),
    );
    for (const w of wakes) expect(w.code, w.stderr).toBe(0);
    const resumed = wakes.flatMap((w) => w.events.filter((e) => e.type === 'resumed'));
    const calls = wakes.flatMap((w) => w.events.filter((e) => e.type === 'model-call'));
    expect(resumed.map((e) => e.token).sort()).toEqual([...tokens].sort());
    expect(calls).toHaveLength(50);
    const leftover = await runInProcess(['wake', '--once', '--json'], { env });
    expect(leftover.events.filter((e) => e.type === 'resumed')).toHaveLength(0);
  });

  it('a running wake picks up an answer as soon as it lands (LISTEN/NOTIFY)', async () => {
    const waiting = await exec('pg-notify');
    // Polling once an hour: a resume within the test's time can only come from NOTIFY.
    const wake = startCli(['wake', '--json'], {
      env: { ...env, PGAPPNAME: 'test-notify-wake', RUNNER_WAKE_POLL_MS: '3600000' },
    });
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await until(async () => {
        const rows =
          await sql`select 1 from pg_stat_activity where application_name = 'test-notify-wake' and query ilike 'listen%'`;
        return rows.length > 0;
      });
      await runInProcess(['answer', waiting.token as string, '--option', '2'], { env });
      await waitForOutput(wake, '"type":"resumed"', 60_000);
    } finally {
      wake.kill('SIGINT');
      await finished(wake);
      await sql.end();
    }
  });
});
