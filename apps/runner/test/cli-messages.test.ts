import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HELP } from '../src/commands/help.js';
import { openStorage } from '../src/storage/index.js';
import { dataDirs, finished, runInProcess, startCli } from './run-cli.js';
import { call, exec, type Served, serve, start, until } from './serve-harness.js';

// What the CLI says when something is off: it names the question and the command to run,
// ends quietly when its reader goes away, and its help says what the code does.

const dataDir = dataDirs();

describe('what the CLI says', { timeout: 120_000 }, () => {
  it('ends quietly with 141 (SIGPIPE) when its reader goes away', async () => {
    const child = startCli(['operators', 'list', '--data', dataDir()]);
    child.stdout?.destroy();
    const ended = await finished(child);
    expect(ended.code).toBe(141);
    expect(ended.stderr).toBe('');
  });

  it('suggests the command a typo meant, and prints the version of its package.json', async () => {
    const typo = await runInProcess(['operator', 'list']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown command "operator"; did you mean "operators"?');
    const far = await runInProcess(['nope']);
    expect(far.stderr).not.toContain('did you mean');
    const { version } = JSON.parse(
      readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(version).not.toBe('0.0.0');
  });

  it('each help describes each of its options once', () => {
    for (const [command, text] of Object.entries(HELP)) {
      const described = text
        .split('\n')
        .map((line) => /^\s{0,2}(--[a-z-]+)/.exec(line)?.[1])
        .filter((option) => option !== undefined);
      expect(described.length, command).toBe(new Set(described).size);
    }
  });

  it('an unknown token names the question and the command that lists the pending ones; retry names a conversation id for what it is', async () => {
    const data = dataDir();
    await exec('trip-1', { data });
    const answered = await runInProcess(['answer', 'nope', '--accept', 'x', '--data', data]);
    expect(answered.code).toBe(3);
    expect(answered.stderr).toBe(
      'error: no question has the token nope: `runner paused-states list` lists the pending ones\n',
    );
    const retried = await runInProcess(['retry', 'trip-1', '--data', data]);
    expect(retried.code).toBe(3);
    expect(retried.stderr).toContain(
      'no run "trip-1": trip-1 is a conversation id; retry takes a RUN id (',
    );
    expect(retried.stderr).toContain(`runs --conversation trip-1 --data ${data} lists its runs)`);
  });

  it('a rotated key and a revoked key get the same 401', async () => {
    const data = dataDir();
    const storage = await openStorage({ dataDir: data, command: 'the test', log: () => {} });
    let rotated: string;
    let revoked: string;
    try {
      rotated = (await storage.operators().add('bob', [])).key;
      revoked = (await storage.operators().add('vic', [])).key;
      await storage.operators().add('ada', ['admin']);
      await storage.operators().rotate('bob');
      await storage.operators().revoke('vic');
    } finally {
      await storage.close();
    }
    let served: Served | undefined;
    try {
      served = await serve(['--data', data]);
      const url = new URL('/api/pauses', served.url).href;
      const as = (key: string) => call(url, { headers: { authorization: `Bearer ${key}` } });
      const [old, gone] = await Promise.all([as(rotated), as(revoked)]);
      expect([old.status, gone.status]).toEqual([401, 401]);
      expect(old.body.error.message).toBe(gone.body.error.message);
    } finally {
      await served?.stop();
    }
  });

  it('serve announces the public URL it is reached at', async () => {
    const started = start([
      'serve',
      '--port',
      '0',
      '--public-url',
      'https://approvals.example.com',
      '--data',
      dataDir(),
    ]);
    try {
      const line = await until(
        () =>
          started
            .stdout()
            .split('\n')
            .find((l) => l.startsWith('approval center on ')),
        'the announcement',
      );
      expect(line).toMatch(
        /^approval center on https:\/\/approvals\.example\.com\/ \(listening on http:\/\/127\.0\.0\.1:\d+\/, /,
      );
    } finally {
      await started.stop();
    }
  });

  it('a data folder whose audit.key is gone exits 4, as audit --help says', async () => {
    const data = dataDir();
    await exec('audited', { data });
    rmSync(path.join(data, 'audit.key'));
    const verified = await runInProcess(['audit', 'verify', '--data', data]);
    expect(verified.code).toBe(4);
    expect(verified.stderr).toContain('audit.key is missing');
    expect(HELP.audit).toContain("· 4 the data folder's audit.key is\n        gone");
  });
});
