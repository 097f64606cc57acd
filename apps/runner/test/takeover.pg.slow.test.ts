import { createTestDatabase, serverForTests, type TestDatabase } from '@internal/pg-test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, finished, runCli, startCli, waitForOutput } from './run-cli.js';

const server = await serverForTests();
const last = <T>(list: T[]): T => list[list.length - 1] as T;

// A running wake that takes over a killed one's run at once is the reliability suite's
// (takeover: wake SIGKILLed mid-call, postgres, in its quick run too).
describe.skipIf(!server)('takeover after a crash, on PostgreSQL', { timeout: 300_000 }, () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    database = await createTestDatabase(server);
    env = { DATABASE_URL: database.url };
    expect((await runCli(['migrate'], { env })).code).toBe(0);
  });
  afterAll(() => database?.drop());

  /** An answered run of a new conversation; returns its question's token. */
  async function answered(conversation: string): Promise<string> {
    const exec = await runCli(['exec', 'Plan', '--conversation', conversation, '--json'], { env });
    const token = last(exec.events).token as string;
    expect((await runCli(['answer', token, '--option', '1'], { env })).code).toBe(0);
    return token;
  }

  /** A `wake` in its (endless) model call on the answered run, with the default lease. */
  async function midTurn() {
    const wake = startCli(['wake', '--json'], {
      env: { ...env, RUNNER_SCRIPTED_DELAY_MS: '600000' },
    });
    await waitForOutput(wake, '"type":"model-call"');
    return wake;
  }

  async function killed(wake: ReturnType<typeof startCli>): Promise<CliResult> {
    wake.kill('SIGKILL');
    return finished(wake);
  }

  it('a run held by a live wake is left to it: wake --once says who holds it and until when', async () => {
    const token = await answered('held');
    const holder = await midTurn();
    try {
      const once = await runCli(['wake', '--once', '--json'], { env });
      expect(once.code, once.stderr).toBe(0);
      expect(once.events.filter((e) => e.type === 'run-claimed')).toEqual([]);
      const leased = once.events.find((e) => e.type === 'leased');
      expect(leased).toMatchObject({
        runs: 1,
        workers: [expect.objectContaining({ runs: 1, holder: 'alive' })],
      });
      const [worker] = (leased?.workers ?? []) as Array<{ worker: string; claimableInMs: number }>;
      expect(worker?.worker).toMatch(new RegExp(`/${holder.pid}/w1$`));
      expect(worker?.claimableInMs).toBeGreaterThan(30_000);
      const text = await runCli(['wake', '--once'], { env });
      expect(text.stdout).toContain(`nothing to resume now: 1 run is leased: 1 by `);
      expect(text.stdout).toContain('its process lives');
    } finally {
      await killed(holder);
    }
    // Its process gone, the run is shown so and taken over at once, the lease notwithstanding.
    const runs = await runCli(['runs', '--conversation', 'held', '--json'], { env });
    expect(runs.events).toEqual([
      expect.objectContaining({ status: 'running', leaseHolder: 'gone' }),
    ]);
    const text = await runCli(['runs', '--conversation', 'held'], { env });
    expect(text.stdout).toContain('whose process is gone: claimable now');
    const next = await runCli(['wake', '--once', '--json'], { env });
    expect(next.events.filter((e) => e.type === 'resumed')).toEqual([
      expect.objectContaining({ token, status: 'waiting', attempt: 2 }),
    ]);
  });

  it('a run that kills its worker every time fails after the limit, saying how its attempts ended', async () => {
    await answered('doomed');
    const limit = { ...env, RUNNER_MAX_ATTEMPTS: '2' };
    for (let kill = 0; kill < 2; kill++) {
      const wake = startCli(['wake', '--json'], {
        env: { ...limit, RUNNER_SCRIPTED_DELAY_MS: '600000' },
      });
      await waitForOutput(wake, '"type":"model-call"');
      await killed(wake);
    }
    const last = await runCli(['wake', '--once', '--json'], { env: limit });
    expect(last.code).toBe(1);
    expect(last.events.filter((e) => e.type === 'model-call')).toEqual([]);
    expect(last.events.find((e) => e.type === 'run-failed')).toMatchObject({
      attempt: 2,
      workerGone: 2,
      errors: 0,
    });
    const failed = await runCli(['runs', '--conversation', 'doomed', '--json'], { env });
    expect(failed.events).toEqual([
      expect.objectContaining({ status: 'failed', attempts: 2, lostAttempts: 2 }),
    ]);
    expect(String(failed.events[0]?.lastError)).toContain(
      'gave up after 2 attempts (2 ended with the worker gone, 0 with an error)',
    );
  });
});
