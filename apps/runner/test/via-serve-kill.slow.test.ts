import { once } from 'node:events';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataDirs, run, serve, start, until } from './serve-harness.js';

const dataDir = dataDirs();

describe('a serve killed while it runs an exec sent through it', () => {
  it('fails the exec clearly; the next command recovers the folder; the run exists at most once', async () => {
    const data = dataDir();
    // The model's first call takes long enough for the server to die during it.
    const env = { RUNNER_MODEL: 'scripted:trip' };
    // Without its wake loop: a wake of another terminal cannot be answered by it (below).
    const server = await serve(['--data', data, '--no-wake'], {
      ...env,
      RUNNER_SCRIPTED_DELAY_MS: '60000',
    });
    const exec = start(['exec', 'Plan me a trip', '--conversation', 'k', '--data', data], env);
    const exited = once(exec.child, 'close');
    await until(() => server.stdout().includes('"type":"hosted"'), 'serve to start the exec');
    const wake = await run(['wake', '--once', '--data', data], env);
    expect(wake.code).toBe(4);
    expect(wake.stderr).toContain(
      `serve (pid ${server.child.pid}) holds ${data} without its wake loop (--no-wake)`,
    );
    server.child.kill('SIGKILL');
    const [code] = await exited;
    expect(code).toBe(4);
    expect(exec.stderr()).toMatch(
      /the connection to serve \(pid \d+\) broke before `runner exec` finished .*nothing is sent again/,
    );
    const after = await run(['runs', '--json', '--conversation', 'k', '--data', data]);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stderr).not.toContain('via serve');
    expect(after.events.filter((e) => e.type === 'run').length).toBeLessThanOrEqual(1);
    expect(existsSync(path.join(data, 'serve.sock'))).toBe(false);
    expect(existsSync(path.join(data, 'serve.json'))).toBe(false);
  }, 120_000);
});
