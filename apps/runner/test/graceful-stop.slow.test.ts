import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI, dataDirs, finished, runCli, startCli, waitForOutput } from './run-cli.js';

// SIGTERM (a rolling restart) and SIGINT stop `wake` and `serve` gracefully: nothing more is
// claimed, turns in flight get the grace, and the process exits 0. A wake's turn that
// finishes within the grace, or is cut, is the reliability suite's (stop: embedded).

const dataDir = dataDirs();

/** A conversation started and its first question answered: a run ready to resume. */
async function readyRun(data: string, conversation: string): Promise<string> {
  const exec = await runCli([
    'exec',
    'Plan a trip',
    '--conversation',
    conversation,
    '--data',
    data,
    '--json',
  ]);
  const token = exec.events.find((e) => e.type === 'run-waiting')?.token as string;
  expect((await runCli(['answer', token, '--accept', 'Lisbon', '--data', data])).code).toBe(0);
  return token;
}

describe('graceful stop of wake and serve (embedded default)', { timeout: 300_000 }, () => {
  it('an idle wake stops on SIGTERM, and on SIGINT, with exit 0', async () => {
    const data = dataDir();
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const wake = startCli(['wake', '--data', data, '--json']);
      await waitForOutput(wake, '"type":"ready"');
      wake.kill(signal);
      const ended = await finished(wake);
      expect(ended.code, ended.stderr).toBe(0);
      expect(ended.events.map((e) => e.type)).toEqual(['ready', 'stop-requested']);
      expect(ended.events[1]).toMatchObject({ signal, graceMs: 30_000 });
    }
  });

  it('an idle serve closes its server on SIGTERM with exit 0', async () => {
    const data = dataDir();
    const serve = startCli(['serve', '--port', '0', '--data', data, '--json', '--grace', '5s']);
    await waitForOutput(serve, '"type":"listening"');
    const { url } = JSON.parse(
      serve.output.stdout.split('\n').find((l) => l.includes('"listening"')) ?? '{}',
    ) as { url: string };
    // A keep-alive connection of a client does not hold the server open.
    expect((await fetch(`${url}api/pauses`)).status).toBe(200);
    serve.kill('SIGTERM');
    const ended = await finished(serve);
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.events.at(-1)).toMatchObject({ type: 'stop-requested', graceMs: 5_000 });
    await expect(fetch(`${url}api/pauses`)).rejects.toThrow();
  });

  it('serve cut at its grace: the resume in flight is released, serve exits 0, and the next process resumes it at once', async () => {
    const data = dataDir();
    const token = await readyRun(data, 'cut-1');
    const serve = startCli(['serve', '--port', '0', '--data', data, '--json', '--grace', '0s'], {
      env: { RUNNER_SCRIPTED_DELAY_MS: '5000' },
    });
    await waitForOutput(serve, '"type":"listening"');
    const { url } = JSON.parse(
      serve.output.stdout.split('\n').find((l) => l.includes('"listening"')) ?? '{}',
    ) as { url: string };
    // The hosted wake claims the run and sits in its 5 s model call.
    for (let i = 0; i < 600; i++) {
      const recent = (await (await fetch(`${url}api/recent?limit=5`)).json()) as {
        recent?: Array<{ token: string; run: { status: string } | null }>;
      };
      if (recent.recent?.find((q) => q.token === token)?.run?.status === 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    serve.kill('SIGTERM');
    const ended = await finished(serve);
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.events.filter((e) => e.type === 'run-released')).toEqual([
      expect.objectContaining({ token, attempt: 1 }),
    ]);
    expect(ended.events.map((e) => e.type)).not.toContain('resumed');
    // The default lease (60 s) has not expired: only the release lets the next process in.
    const next = await runCli(['wake', '--once', '--data', data, '--json']);
    expect(next.events.filter((e) => e.type === 'resumed')).toEqual([
      expect.objectContaining({ token, attempt: 1, status: 'waiting' }),
    ]);
  });

  it('--grace takes a duration: anything else is exit 2, and --help explains it', async () => {
    const data = dataDir();
    for (const command of ['wake', 'serve']) {
      const bad = await runCli([command, '--grace', 'soon', '--data', data]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--grace takes a duration like 30s');
      // Not runCli: serve's help has lines that start with "{" and are not JSON events.
      const help = execFileSync(process.execPath, [CLI, command, '--help'], { encoding: 'utf8' });
      expect(help).toContain('--grace DURATION');
    }
  });
});
