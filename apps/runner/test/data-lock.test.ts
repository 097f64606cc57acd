import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataDirs, runCli } from './run-cli.js';

const dataDir = dataDirs();

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], {
    encoding: 'utf8',
  });
  return Number(child.stdout.trim());
}

describe("the data folder's lock", { timeout: 120_000 }, () => {
  it('left by a holder that died, or unreadable, is taken over by the next command, which leaves no lock files behind', async () => {
    for (const content of [
      JSON.stringify({ pid: deadPid(), command: 'wake', since: new Date().toISOString() }),
      '',
    ]) {
      const data = dataDir();
      writeFileSync(path.join(data, 'runner.lock'), content);
      const listed = await runCli(['paused-states', 'list', '--data', data]);
      expect(listed.code, listed.stderr).toBe(0);
      expect(readdirSync(data).filter((name) => name.startsWith('runner.lock'))).toEqual([]);
    }
  });

  it('is refused with the holder named while its holder lives', async () => {
    const data = dataDir();
    const lock = path.join(data, 'runner.lock');
    const since = new Date().toISOString();
    writeFileSync(lock, JSON.stringify({ pid: process.pid, command: 'serve', since }));
    const blocked = await runCli(['paused-states', 'list', '--data', data]);
    expect(blocked.code).toBe(4);
    expect(blocked.stderr.trim().split('\n')).toHaveLength(1);
    expect(blocked.stderr).toContain(
      `is in use by \`runner serve\` (pid ${process.pid}, since ${since})`,
    );
    // The refused process leaves the holder's lock as it was, and nothing of its own.
    expect(existsSync(lock)).toBe(true);
    expect(readdirSync(data).filter((name) => name.startsWith('runner.lock'))).toEqual([
      'runner.lock',
    ]);
  });
});
