import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirs, exec, run } from './serve-harness.js';

const dataDir = dataDirs();

describe('runner serve binds its port before it resumes anything', () => {
  const taken = createServer();
  let port: number;
  beforeAll(async () => {
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    port = (taken.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

  it('with its port taken it exits 4 and leaves an answered run answered, the audit log as it was', async () => {
    const data = dataDir();
    const token = await exec('c-taken', { data });
    expect((await run(['answer', token, '--accept', 'April', '--data', data])).code).toBe(0);
    const before = await run(['audit', '--data', data, '--json']);

    const served = await run(['serve', '--port', String(port), '--data', data]);
    expect(served.code).toBe(4);
    expect(served.stdout).toBe('');
    expect(served.stderr).toBe(
      `error: port ${port} on 127.0.0.1 is in use: stop what listens there, or give another --port (0 picks a free one)\n`,
    );
    expect((await run(['audit', '--data', data, '--json'])).stdout).toBe(before.stdout);

    // The run is still there to resume, by whoever serves next.
    const woke = await run(['wake', '--once', '--json', '--data', data]);
    expect(woke.code).toBe(0);
    expect(woke.events.find((e) => e.type === 'resumed')).toMatchObject({ token });
  }, 120_000);
});
