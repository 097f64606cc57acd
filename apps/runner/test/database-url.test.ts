import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { dataDirs, runCli, runInProcess } from './run-cli.js';

// A DATABASE_URL that cannot lead to a PostgreSQL is refused in one line: before connecting
// when the URL itself is wrong, within the connect timeout when what answers is not
// PostgreSQL. Every listener here is the test's own, on 127.0.0.1. A command that connects runs
// as a process (the driver's attempts can outlive the command); one refused before connecting
// runs in this process.

const dataDir = dataDirs();
const servers: Server[] = [];
const sockets = new Set<Socket>();
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

const url = (port: number, query = '') =>
  `postgres://ada:secret-pw@127.0.0.1:${port}/runner${query}`;

async function expectUnusable(
  args: string[],
  databaseUrl: string,
  cause: string,
  run: typeof runCli = runCli,
) {
  const result = await run([...args, '--data', dataDir({ empty: true })], {
    env: { DATABASE_URL: databaseUrl },
  });
  const what = `${args.join(' ')} against ${databaseUrl}`;
  expect(result.code, `${what}: ${result.stderr}`).toBe(4);
  expect(result.stderr.trimEnd().split('\n'), what).toHaveLength(1);
  const where = new URL(databaseUrl);
  expect(result.stderr, what).toContain(
    `cannot use PostgreSQL at postgres://${where.host}/runner: ${cause}`,
  );
  expect(result.stderr).not.toContain('secret-pw');
}

describe('a DATABASE_URL that reaches no PostgreSQL', { timeout: 120_000 }, () => {
  it('an HTTP server on the port: every command gives up at once, naming the server and what answered', async () => {
    const http = createHttpServer((_req, res) => res.end('hi'));
    const port = await listen(http as unknown as Server);
    const commands = [
      ['runs'],
      ['show', 'trip-1'],
      ['paused-states', 'list'],
      ['paused-states', 'get', 'tok'],
      ['exec', 'Plan me a trip'],
      ['answer', 'tok', '--accept', 'yes'],
      ['wake', '--once'],
      ['wake'],
      ['stop', 'trip-1'],
      ['retry', 'run-1'],
      ['migrate'],
      ['serve', '--port', '0'],
    ];
    await Promise.all(
      commands.map((args) =>
        expectUnusable(
          args,
          url(port, '?connect_timeout=5'),
          'the server does not speak the PostgreSQL protocol (it answered "HTTP/1.1 400 Bad Request")',
        ),
      ),
    );
    // Without a connect_timeout too: the runner's default bounds the wait.
    await expectUnusable(['runs'], url(port), 'the server does not speak the PostgreSQL protocol');
  });

  it('a listener that talks garbage, hangs up, or says nothing: one line within the connect timeout', async () => {
    const banner = await listen(createServer((socket) => socket.write('SSH-2.0-OpenSSH_9.6\r\n')));
    const hangUp = await listen(
      createServer((socket) => socket.once('data', () => socket.end('?!'))),
    );
    const closer = await listen(createServer((socket) => socket.destroy()));
    const silent = await listen(createServer(() => {}));
    const cases: Array<[number, string]> = [
      [
        banner,
        'the server does not speak the PostgreSQL protocol (it answered "SSH-2.0-OpenSSH_9.6")',
      ],
      [hangUp, 'the server does not speak the PostgreSQL protocol (it answered "?!")'],
      [closer, 'the server closed the connection without answering as PostgreSQL does'],
      [
        silent,
        'the server accepted the connection but did not answer within 1 s (connect_timeout)',
      ],
    ];
    await Promise.all(
      cases.map(([port, cause]) =>
        expectUnusable(['runs'], url(port, '?connect_timeout=1'), cause),
      ),
    );
  });

  it('sslmode=require against a server that offers no TLS says so', async () => {
    // Answers the SSLRequest as a PostgreSQL without TLS does: 'N'.
    const noTls = await listen(
      createServer((socket) => socket.once('data', () => socket.write('N'))),
    );
    await expectUnusable(
      ['runs'],
      url(noTls, '?sslmode=require&connect_timeout=2'),
      'the server does not support TLS, which sslmode=require asks for',
    );
  });

  it('a URL that cannot be meant is refused before connecting, naming what is wrong (exit 2)', async () => {
    const cases: Array<[string, string]> = [
      ['postgres://', 'DATABASE_URL postgres:// names no database'],
      ['postgres://127.0.0.1:5432', 'DATABASE_URL postgres://127.0.0.1:5432 names no database'],
      ['postgresql://ada@127.0.0.1/', 'names no database'],
      [
        'postgres://ada@127.0.0.1:99999/runner',
        'DATABASE_URL has port 99999, out of range: a port is a number from 1 to 65535',
      ],
      ['postgres://ada@127.0.0.1:0/runner', 'has port 0, out of range'],
      ['postgres://ada@127.0.0.1:54x/runner', "DATABASE_URL's port is not a number"],
      ['postgres://ada:secret-pw#1@127.0.0.1/runner', 'percent-encode the characters # ? / @ :'],
      ['postgres://ada:12345#@127.0.0.1/runner', 'percent-encode the characters # ? / @ :'],
      ['postgres://ada:12?345@127.0.0.1/runner', 'percent-encode the characters # ? / @ :'],
      ['postgres://a:1,b:2/runner', 'names several hosts'],
      [
        'postgres://ada@127.0.0.1/runner?connect_timeout=0',
        "DATABASE_URL's connect_timeout takes a number of seconds above 0",
      ],
      ['postgres://ada@127.0.0.1/runner?connect_timeout=soon', 'not "soon"'],
    ];
    const results = await Promise.all(
      cases.map(([databaseUrl]) =>
        runInProcess(['runs', '--data', dataDir({ empty: true })], {
          env: { DATABASE_URL: databaseUrl },
        }),
      ),
    );
    cases.forEach(([databaseUrl, message], i) => {
      const result = results[i] as (typeof results)[number];
      expect(result.code, databaseUrl).toBe(2);
      expect(result.stderr.trimEnd().split('\n'), databaseUrl).toHaveLength(1);
      expect(result.stderr, databaseUrl).toContain(message);
      expect(result.stderr).not.toContain('secret-pw');
      expect(result.stderr).not.toContain('12345');
    });
    const listen = await runInProcess(['wake', '--once', '--data', dataDir({ empty: true })], {
      env: {
        DATABASE_URL: 'postgres://ada@127.0.0.1/runner?pgbouncer=true',
        RUNNER_LISTEN_URL: 'postgres://ada@127.0.0.1:70000/runner',
      },
    });
    expect(listen.code).toBe(2);
    expect(listen.stderr).toContain('RUNNER_LISTEN_URL has port 70000, out of range');
  });
});
