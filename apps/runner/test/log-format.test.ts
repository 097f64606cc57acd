import { describe, expect, it } from 'vitest';
import { dataDirs, sharedStorage } from './run-cli.js';

const dataDir = dataDirs();
// A test's commands share one open storage: PGlite opens once per data folder, not per command.
const shared = sharedStorage();

/** Every line of `text` as one JSON object (a line that is not fails the test). */
function logLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('--log-format json', { timeout: 120_000 }, () => {
  it('prints every line as one pino object with the run, conversation and token it is about', async () => {
    const data = dataDir();
    const exec = await shared.run([
      'exec',
      'Plan a trip',
      '--conversation',
      'logs',
      '--data',
      data,
    ]);
    expect(exec.code, exec.stderr).toBe(0);
    const token = /token (\S+)/.exec(exec.stdout)?.[1] as string;
    expect((await shared.run(['answer', token, '--option', '1', '--data', data])).code).toBe(0);
    const wake = await shared.run(['wake', '--once', '--log-format', 'json', '--data', data]);
    expect(wake.code, wake.stderr).toBe(0);
    const lines = logLines(wake.stdout);
    for (const line of lines) {
      expect(line).toMatchObject({ level: 'info', pid: expect.any(Number) });
      expect(typeof line.msg).toBe('string');
      expect(Number.isNaN(Date.parse(String(line.time)))).toBe(false);
    }
    const about = { runId: expect.any(String), conversationId: 'logs' };
    expect(lines.find((l) => l.event === 'run-claimed')).toMatchObject({ ...about, token });
    // The streamed reply is one line, when it ended.
    expect(lines.filter((l) => l.event === 'assistant-text')).toEqual([
      expect.objectContaining({ ...about, token, msg: 'Lisbon, good choice.' }),
    ]);
    expect(lines.find((l) => l.event === 'run-waiting')).toMatchObject({
      ...about,
      token: expect.not.stringMatching(token),
      msg: expect.stringContaining('How many days in Lisbon?'),
    });
    // A failure is an error line on stderr, with its exit code.
    const refused = await shared.run(['answer', token, '--accept', 'x', '--data', data], {
      env: { RUNNER_LOG_FORMAT: 'json' },
    });
    expect(refused.code).toBe(5);
    expect(refused.stdout).toBe('');
    expect(logLines(refused.stderr)).toEqual([
      expect.objectContaining({ level: 'error', exitCode: 5, msg: expect.stringContaining(token) }),
    ]);
  });

  it('refuses a log format it does not know, as a usage error', async () => {
    const bad = await shared.run(['runs', '--log-format', 'xml', '--data', dataDir()]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('error: --log-format takes text or json, not "xml"\n');
  });
});
