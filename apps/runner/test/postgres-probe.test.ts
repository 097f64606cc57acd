import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { probeServer } from '../src/storage/postgres-probe.js';

// Listeners that are not PostgreSQL, on 127.0.0.1: each gets a verdict, none a hang.

const servers: Server[] = [];
const sockets = new Set<Socket>();
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  server.on('connection', (socket: Socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

/** A listener that answers every connection's first bytes with `reply` (and maybe hangs up). */
function replying(reply: Buffer | string, hangUp: boolean): Promise<number> {
  return listen(
    createServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', () => (hangUp ? socket.end(reply) : socket.write(reply)));
    }),
  );
}

const probe = (port: number, timeoutMs = 2_000) =>
  probeServer({ host: '127.0.0.1', port, timeoutMs });

describe('probeServer', () => {
  it('tells an HTTP server, a garbage speaker and a hang-up from PostgreSQL, naming what it got', async () => {
    const http = createHttpServer((_req, res) => res.end('hi'));
    const httpPort = await listen(http as unknown as Server);
    expect(await probe(httpPort)).toEqual({
      postgres: false,
      tls: false,
      problem: expect.stringContaining('"HTTP/1.1 400 Bad Request"'),
    });
    const banner = await listen(
      createServer((socket) => {
        socket.on('error', () => {});
        socket.write('SSH-2.0-OpenSSH_9.6\r\n');
      }),
    );
    expect((await probe(banner)).problem).toBe(
      'the server does not speak the PostgreSQL protocol (it answered "SSH-2.0-OpenSSH_9.6")',
    );
    for (const hangUp of [true, false]) {
      const garbage = await replying(Buffer.from([0x00, 0xff, 0x1b, 0x5b]), hangUp);
      const result = await probe(garbage);
      expect(result.postgres, String(hangUp)).toBe(false);
      expect(result.problem).toContain('does not speak the PostgreSQL protocol');
    }
    const closer = await listen(createServer((socket) => socket.destroy()));
    expect((await probe(closer)).problem).toBe(
      'the server closed the connection without answering as PostgreSQL does',
    );
  });

  it('gives up on a silent listener within its timeout', async () => {
    const silent = await listen(createServer(() => {}));
    expect(await probe(silent, 300)).toEqual({
      postgres: false,
      tls: false,
      problem:
        'the server accepted the connection but did not answer within 0.3 s (connect_timeout)',
    });
  });

  it('reads the one-byte answers and an ErrorResponse as PostgreSQL, and rejects a refused connection', async () => {
    expect(await probe(await replying('S', false))).toEqual({ postgres: true, tls: true });
    expect(await probe(await replying('N', false))).toEqual({ postgres: true, tls: false });
    const error = Buffer.concat([
      Buffer.from('E'),
      Buffer.from([0, 0, 0, 9]),
      Buffer.from('SFATAL\0'),
    ]);
    expect(await probe(await replying(error, true))).toEqual({ postgres: true, tls: false });
    const closed = createServer();
    const port = await listen(closed);
    await new Promise((r) => closed.close(r));
    servers.splice(servers.indexOf(closed), 1);
    await expect(probe(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
