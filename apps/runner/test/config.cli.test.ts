import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI, dataDirs, runCli } from './run-cli.js';

// A bad setting is refused before the command does anything: one line naming the variable
// and what it takes, exit 2, as any bad input.

const dataDir = dataDirs();

describe('a bad environment variable', { timeout: 120_000 }, () => {
  it('stops any command at once with exit 2, naming the variable and what it takes', async () => {
    const fresh = path.join(dataDir({ empty: true }), 'never-made');
    const [exec, json, help] = await Promise.all([
      runCli(['exec', 'Plan me a trip', '--data', fresh], {
        env: { RUNNER_WORKER_CONCURRENCY: 'two' },
      }),
      runCli(['runs', '--json', '--data', dataDir()], { env: { RUNNER_LEASE_MS: '0' } }),
      runCli(['help', 'environment'], { env: { RUNNER_LEASE_MS: '0' } }),
    ]);
    expect(exec.code).toBe(2);
    expect(exec.stderr).toBe(
      'error: RUNNER_WORKER_CONCURRENCY must be a whole number ≥ 1, not "two"\n',
    );
    expect(exec.stdout).toBe('');
    expect(existsSync(fresh), 'the data folder is not made').toBe(false);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toEqual({
      type: 'error',
      message: 'RUNNER_LEASE_MS must be a whole number ≥ 1, not "0"',
      failure: 'usage',
      exitCode: 2,
    });
    // The help still prints: it is how to find out what the variable takes.
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('RUNNER_LEASE_MS  how long a worker holds a run');
  });
});

/** The workspace packages' modules that `runner ARGS` loads, named by package. */
async function packagesLoaded(args: string[]): Promise<string[]> {
  // A loader hook prints each module it loads; the package is the folder under packages/.
  const hooks = `export async function load(url, context, next) {
    const name = /\\/packages\\/([^/]+)\\//.exec(url)?.[1];
    if (name) console.error('loaded @x/' + name);
    return next(url, context);
  }`;
  const register = `import { register } from 'node:module';
    register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  const flag = `data:text/javascript,${encodeURIComponent(register)}`;
  const run = promisify(execFile)(process.execPath, ['--import', flag, CLI, ...args], {
    env: { ...process.env, DATABASE_URL: '' },
  });
  const { stderr } = await run.catch((error: { stderr: string }) => error);
  const loaded = stderr.split('\n').filter((line) => line.startsWith('loaded '));
  return [...new Set(loaded.map((line) => line.slice('loaded '.length)))];
}

describe('the CLI start', { timeout: 120_000 }, () => {
  // Every process a person or a test starts pays for what it loads before it does anything.
  it('a usage error loads none of the packages; --help not the executive, notify or policy', async () => {
    const [usage, help] = await Promise.all([packagesLoaded(['nope']), packagesLoaded(['--help'])]);
    expect(usage).toEqual([]);
    expect(help).not.toEqual(expect.arrayContaining(['@x/executive']));
    expect(help).not.toEqual(expect.arrayContaining(['@x/notify']));
    expect(help).not.toEqual(expect.arrayContaining(['@x/policy']));
  });
});
