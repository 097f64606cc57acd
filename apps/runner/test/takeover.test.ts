import { describe, expect, it } from 'vitest';
import { dataDirs, finished, runCli, startCli, waitForOutput } from './run-cli.js';

const dataDir = dataDirs();

describe('takeover after a crash, on the embedded default', { timeout: 300_000 }, () => {
  it('a wake killed mid-call leaves its claim recorded and counted; the next process takes it over at once', async () => {
    const data = dataDir();
    const cli = (args: string[]) => runCli([...args, '--data', data, '--json']);
    const exec = await cli(['exec', 'Plan', '--conversation', 'killed']);
    const token = exec.events.find((e) => e.type === 'run-waiting')?.token as string;
    expect((await cli(['answer', token, '--option', '1'])).code).toBe(0);
    const wake = startCli(['wake', '--json', '--data', data], {
      env: { RUNNER_SCRIPTED_DELAY_MS: '600000' },
    });
    await waitForOutput(wake, '"type":"model-call"');
    wake.kill('SIGKILL');
    await finished(wake);
    // The claim was durable (PGlite has no WAL writer to flush an asynchronous one).
    expect((await cli(['runs'])).events).toEqual([
      expect.objectContaining({ status: 'running', attempts: 1, leaseHolder: 'gone' }),
    ]);
    const next = await cli(['wake', '--once']);
    expect(next.events.filter((e) => e.type === 'resumed')).toEqual([
      expect.objectContaining({ token, status: 'waiting', attempt: 2 }),
    ]);
  });

  it('the next process on the data folder takes over a killed wake’s run at once, the lease notwithstanding', async () => {
    const data = dataDir();
    const cli = (args: string[]) =>
      runCli([...args, '--data', data, '--json', '--model', 'scripted:team']);
    const exec = await cli(['exec', 'Plan a Lisbon trip', '--conversation', 'crash']);
    const waiting = exec.events.find((e) => e.type === 'run-waiting');
    for (const { token } of (waiting?.questions ?? []) as Array<{ token: string }>) {
      expect((await cli(['answer', token, '--accept', 'ok'])).code).toBe(0);
    }
    // Workers one at a time, with the default lease (60 s): killed once w1's step is stored
    // (which also made the claim durable), during w2's model call.
    const wake = startCli(['wake', '--json', '--data', data, '--model', 'scripted:team'], {
      env: { RUNNER_SCRIPTED_DELAY_MS: '1500', RUNNER_WORKER_CONCURRENCY: '1' },
    });
    await waitForOutput(wake, 'w1 finished');
    wake.kill('SIGKILL');
    await finished(wake);
    const runs = await cli(['runs']);
    expect(runs.events).toEqual([
      expect.objectContaining({ status: 'running', leaseHolder: 'gone' }),
    ]);
    const next = await cli(['wake', '--once']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.events.filter((e) => e.type === 'resumed')).toEqual([
      expect.objectContaining({ status: 'completed', attempt: 2 }),
    ]);
    // w1 finished before the kill and is not run again: w2's call, then the parent's.
    expect(next.events.filter((e) => e.type === 'model-call')).toHaveLength(2);
  });
});
