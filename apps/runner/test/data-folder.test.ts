import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runInProcess } from './run-cli.js';

// The data folder is where everything of the embedded default lives: an empty --data is
// refused, and a folder that does not exist is created only by a command that writes, which
// says so; every other command says it does not exist.

const root = mkdtempSync(path.join(tmpdir(), 'runner-data-folder-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the data folder', { timeout: 120_000 }, () => {
  it('an empty --data is refused, not read as the current folder', async () => {
    const cwd = mkdtempSync(path.join(root, 'cwd-'));
    for (const args of [
      ['exec', 'Plan me a trip', '--data', ''],
      ['runs', '--data='],
    ]) {
      const result = await runInProcess(args, { cwd });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trimEnd().split('\n')).toEqual([
        'error: --data needs a folder; an empty value would be the current folder',
      ]);
    }
    // An empty RUNNER_DATA is unset: the default .runner, never the current folder.
    const unset = await runInProcess(['runs'], { cwd, env: { RUNNER_DATA: '' } });
    expect(unset.stderr).toContain(`the data folder ${path.join(cwd, '.runner')} does not exist`);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('a command that only reads or changes what is stored does not create a missing folder', async () => {
    const missing = path.join(root, 'typo');
    const commands = [
      ['runs'],
      ['show', 'trip-1'],
      ['paused-states', 'list'],
      ['paused-states', 'get', 'tok'],
      ['paused-states', 'purge', '--older-than', '30d'],
      ['wake', '--once'],
      ['answer', 'tok', '--accept', 'yes'],
      ['stop', 'trip-1'],
      ['retry', 'run-1'],
      ['chat', '--resume'],
      ['audit'],
      ['notifications', 'list'],
      ['operators', 'list'],
    ];
    const results = await Promise.all(
      commands.map((args) => runInProcess([...args, '--data', missing])),
    );
    results.forEach((result, i) => {
      const what = commands[i]?.join(' ');
      expect(result.code, what).toBe(4);
      expect(result.stderr.trimEnd().split('\n'), what).toHaveLength(1);
      expect(result.stderr, what).toContain(
        `error: the data folder ${missing} does not exist: check --data (or RUNNER_DATA)`,
      );
    });
    expect(existsSync(missing)).toBe(false);
  });

  it('the first command that writes creates it and says so on stderr, naming it; later ones do not', async () => {
    const fresh = path.join(root, 'new', 'store');
    const first = await runInProcess([
      'exec',
      'Plan me a trip',
      '--conversation',
      'trip-1',
      '--data',
      fresh,
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toBe(
      `created the data folder ${fresh} (first use), with the audit key ${path.join(fresh, 'audit.key')} (mode 0600)\n`,
    );
    expect(first.stdout).not.toContain('created the data folder');
    // The other commands the Storage section of docs/runs-and-leases.md names as creating one.
    for (const args of [
      ['operators', 'add', 'ada'],
      ['chat', '--list'],
    ]) {
      const other = path.join(root, 'new', args.join('-'));
      const made = await runInProcess([...args, '--data', other]);
      expect(made.code, made.stderr).toBe(0);
      expect(made.stderr, args.join(' ')).toContain(`created the data folder ${other} (first use)`);
    }
    const again = await runInProcess(['runs', '--data', fresh]);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');
    expect(again.stdout).toContain('trip-1');
  });
});
