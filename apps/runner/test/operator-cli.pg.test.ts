import { freePort, serverForTests } from '@internal/pg-test';
import { describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

// A PostgreSQL that cannot be used is one line naming the server (never its password) and
// the cause, exit 4, whatever the cause.

const server = await serverForTests();

describe.skipIf(!server)('storage errors on PostgreSQL', { timeout: 120_000 }, () => {
  it('names the server and the cause: refused, no such database, unknown host, authentication', async () => {
    const base = new URL(server as string);
    const at = (change: (url: URL) => void) => {
      const url = new URL(base);
      url.password = 'secret-pw';
      change(url);
      return url;
    };
    const port = await freePort();
    const cases: Array<[URL, string]> = [
      [
        at((u) => {
          u.port = String(port);
        }),
        'connection refused',
      ],
      [
        at((u) => {
          u.pathname = '/runner_no_such_database';
        }),
        'the database does not exist',
      ],
      [
        at((u) => {
          u.hostname = 'no-such-host.invalid';
        }),
        'unknown host',
      ],
      [
        at((u) => {
          u.username = 'runner_no_such_role';
        }),
        'authentication failed',
      ],
    ];
    for (const [url, cause] of cases) {
      const where = `postgres://${url.host}${url.pathname}`;
      const env = { DATABASE_URL: url.toString() };
      const text = await runCli(['paused-states', 'list'], { env });
      expect(text.code, cause).toBe(4);
      expect(text.stderr.trimEnd().split('\n'), cause).toHaveLength(1);
      expect(text.stderr).toContain(`cannot use PostgreSQL at ${where}: ${cause}`);
      expect(text.stderr).not.toContain('secret-pw');
      const json = await runCli(['runs', '--json'], { env });
      expect(json.code).toBe(4);
      expect(JSON.parse(json.stderr)).toMatchObject({
        type: 'error',
        failure: 'unavailable',
        exitCode: 4,
        message: expect.stringContaining(cause),
      });
    }
  });
});
