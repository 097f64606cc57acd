import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, dataDirs, exec, json, listen, run, type Served, serve } from './serve-harness.js';

// The approval center's HTTP framing, driven over raw sockets (issue 55, items 4, 5, 7 and 8):
// two Host headers, a pipelined write then read, Node's own refusals in the API's error
// shape, a 413 the client can read, the connection cap, the headers, body and idle
// timeouts, and the proxy trusted to name the client.

const dataDir = dataDirs();

/** What a raw connection received, and how it ended. */
interface Exchange {
  text: string;
  /** The responses' status lines, in order. */
  statuses: number[];
  /** The JSON bodies, in order. */
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came.
  bodies: any[];
  /** How the connection ended: closed by the server, reset, or still open at the deadline. */
  ended: 'closed' | 'reset' | 'open';
  ms: number;
}

/** The responses one after the other in `text`: each status, and each body as JSON. */
function responsesIn(text: string): Pick<Exchange, 'statuses' | 'bodies'> {
  const statuses: number[] = [];
  const bodies: unknown[] = [];
  let rest = text;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (!rest.startsWith('HTTP/1.1 ') || end < 0) break;
    const head = rest.slice(0, end);
    statuses.push(Number(head.slice(9, 12)));
    const length = Number(/^content-length: (\d+)$/im.exec(head)?.[1] ?? 0);
    const body = Buffer.from(rest.slice(end + 4))
      .subarray(0, length)
      .toString('utf8');
    bodies.push(body ? JSON.parse(body) : undefined);
    rest = rest.slice(end + 4 + body.length);
  }
  return { statuses, bodies };
}

/**
 * Connects to `url`, writes `bytes` (or each of `writes` as the socket drains), and reads
 * until the server closes the connection or `waitMs` passes.
 */
function exchange(
  url: string,
  bytes: string | Buffer | Iterable<Buffer>,
  waitMs = 5_000,
): Promise<Exchange> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let ended: Exchange['ended'] = 'open';
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ text, ...responsesIn(text), ended, ms: Date.now() - started });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') ended = 'reset';
    });
    socket.on('close', () => {
      if (ended === 'open') ended = 'closed';
      finish();
    });
    socket.on('connect', () => {
      if (typeof bytes === 'string' || Buffer.isBuffer(bytes)) {
        socket.write(bytes);
        return;
      }
      const parts = bytes[Symbol.iterator]();
      const pump = () => {
        for (let next = parts.next(); !next.done; next = parts.next()) {
          if (!socket.write(next.value)) {
            socket.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
  });
}

/** `n` chunks of 64 KiB in chunked transfer coding, then its last chunk. */
function* chunked(n: number): Iterable<Buffer> {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  for (let i = 0; i < n; i++) {
    yield Buffer.concat([
      Buffer.from(`${chunk.length.toString(16)}\r\n`),
      chunk,
      Buffer.from('\r\n'),
    ]);
  }
  yield Buffer.from('0\r\n\r\n');
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('runner serve: HTTP framing and connection limits', { timeout: 120_000 }, () => {
  let server: Served;
  const tokens: string[] = [];
  const data = dataDir();

  beforeAll(async () => {
    for (const c of ['f-1', 'f-2']) tokens.push(await exec(c, { data }));
    server = await serve([
      '--no-wake',
      '--data',
      data,
      '--max-connections',
      '6',
      '--headers-timeout',
      '2s',
      '--body-timeout',
      '1s',
      '--idle-timeout',
      '1s',
    ]);
  }, 300_000);
  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
  });

  it('two Host headers (this server, then another) are 400, with the error body', async () => {
    const got = await exchange(
      server.url,
      'GET /api/pauses HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n',
    );
    expect(got.statuses).toEqual([400]);
    expect(got.bodies).toEqual([
      {
        error: {
          code: 'bad_request',
          message: 'the request has more than one host header; HTTP/1.1 allows one (RFC 9112)',
        },
      },
    ]);
    const one = await exchange(
      server.url,
      'GET /api/pauses HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    );
    expect(one.statuses).toEqual([200]);
  });

  it('a pipelined answer then read of one question (one write) are answered in order: the read sees the answer', async () => {
    const token = tokens[0] as string;
    const body = JSON.stringify({ action: 'accept', content: 'Lisbon' });
    const got = await exchange(
      server.url,
      `POST /api/pauses/${token}/answer HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
        `GET /api/pauses/${token} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );
    expect(got.statuses).toEqual([200, 409]);
    expect(got.bodies[1].error).toMatchObject({
      code: 'already_answered',
      answered: [{ token, answer: { action: 'accept', content: 'Lisbon' } }],
    });
  });

  it("Node's own refusals (431, 400, 408) have the API's error body", async () => {
    const huge = await exchange(
      server.url,
      `GET /api/pauses HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(huge.statuses).toEqual([431]);
    expect(huge.bodies[0].error.code).toBe('headers_too_large');
    expect(huge.text).toContain('content-type: application/json; charset=utf-8');
    const framing = await exchange(
      server.url,
      'GET /api/pauses HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n',
    );
    expect(framing.statuses).toEqual([400]);
    expect(framing.bodies[0].error).toEqual({
      code: 'bad_request',
      message: 'the request is not well-formed HTTP/1.1: Invalid character in Content-Length',
    });
    const late = await exchange(server.url, 'GET /api/pauses HTTP/1.1\r\nHost: loc', 8_000);
    expect(late.statuses).toEqual([408]);
    expect(late.bodies[0].error).toEqual({
      code: 'request_timeout',
      message:
        'the request did not arrive in time: headers within 2 s, the whole request within 3 s',
    });
    expect(late.ended).toBe('closed');
  });

  it('a 10 MB chunked body gets a 413 the client reads, never a reset first; so does a declared one', async () => {
    const head = (framing: string) =>
      `POST /api/pauses/${tokens[1]}/answer HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${framing}\r\n`;
    for (const close of ['Connection: close\r\n', '']) {
      const got = await exchange(
        server.url,
        [Buffer.from(head(`Transfer-Encoding: chunked\r\n${close}`)), ...chunked(160)],
        8_000,
      );
      expect(got.statuses, close).toEqual([413]);
      expect(got.bodies[0]).toEqual({
        error: {
          code: 'payload_too_large',
          message: 'request bodies are limited to 262,144 bytes (256 KiB)',
          limit: 262_144,
        },
      });
      expect(got.ended, close).not.toBe('reset');
    }
    const declared = await exchange(
      server.url,
      [
        Buffer.from(head(`Content-Length: ${160 * 64 * 1024}\r\nConnection: close\r\n`)),
        ...Array.from({ length: 160 }, () => Buffer.alloc(64 * 1024, 'a')),
      ],
      8_000,
    );
    expect(declared.statuses).toEqual([413]);
    expect(declared.ended).not.toBe('reset');
    expect((await call(new URL(`/api/pauses/${tokens[1]}`, server.url).toString())).status).toBe(
      200,
    );
  });

  it('a slow body is cut at the headers and body timeouts (408), not held for minutes', async () => {
    const started = Date.now();
    const got = await exchange(
      server.url,
      `POST /api/pauses/${tokens[1]}/answer HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"act`,
      10_000,
    );
    expect(got.statuses).toEqual([408]);
    expect(got.ended).toBe('closed');
    // 3 s for the whole request, checked every second.
    expect(Date.now() - started).toBeLessThan(6_000);
  });

  it('holds at most --max-connections: one more is 503 with the error body; silent ones are closed at the headers timeout', async () => {
    await wait(1_500); // the keep-alive connections of the tests before have closed
    const silent = Array.from({ length: 6 }, () => exchange(server.url, '', 8_000));
    await wait(300);
    const over = await exchange(server.url, 'GET /api/pauses HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(over.statuses).toEqual([503]);
    expect(over.bodies[0].error).toEqual({
      code: 'too_many_connections',
      message:
        'this server keeps at most 6 connections open at once (--max-connections): try again shortly',
    });
    expect(over.text).toMatch(/^retry-after: 1\r$/m);
    // A silent connection is answered 408 and closed at the headers timeout (2 s).
    for (const got of await Promise.all(silent)) {
      expect(got.statuses).toEqual([408]);
      expect(got.ended).toBe('closed');
      expect(got.ms).toBeLessThan(5_000);
    }
    // Once they closed, a new connection is served again.
    const seen: number[] = [];
    for (let i = 0; i < 20 && seen.at(-1) !== 200; i++) {
      const after = await exchange(
        server.url,
        'GET /api/pauses HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
      );
      seen.push(...after.statuses);
      if (seen.at(-1) !== 200) await wait(250);
    }
    expect(seen.at(-1), seen.join(' ')).toBe(200);
  });

  it('closes a kept-alive connection idle past --idle-timeout; an event stream outlives every timeout', async () => {
    const stream = await listen(new URL('/api/events', server.url).toString());
    const idle = await exchange(
      server.url,
      'GET /api/pauses HTTP/1.1\r\nHost: localhost\r\n\r\n',
      8_000,
    );
    expect(idle.statuses).toEqual([200]);
    expect(idle.ended).toBe('closed');
    expect(idle.ms).toBeLessThan(4_000);
    // The stream is past the 3 s of a request and the 1 s of idleness, and still delivers.
    const answered = await call(
      new URL(`/api/pauses/${tokens[1]}/answer`, server.url).toString(),
      json({ action: 'accept', content: 'Kyoto' }),
    );
    expect(answered.status).toBe(200);
    const deadline = Date.now() + 10_000;
    while (!stream.events.some((e) => e.event === 'pause-answered') && Date.now() < deadline) {
      await wait(50);
    }
    expect(stream.events.map((e) => e.event)).toContain('pause-answered');
    await stream.close();
  });

  it('refuses a bad --max-connections, timeout or --trust-proxy before it starts', async () => {
    for (const [flag, value, says] of [
      ['--max-connections', '0', '--max-connections takes a whole number ≥ 1, not "0"'],
      ['--headers-timeout', 'soon', '--headers-timeout takes a duration like 30s'],
      ['--trust-proxy', '10.0.0.0/99', '--trust-proxy takes IP addresses or subnets'],
    ] as const) {
      const refused = await run(['serve', '--port', '0', flag, value, '--data', data]);
      expect(refused.code, flag).toBe(2);
      expect(refused.stderr, flag).toContain(says);
    }
  });
});

describe('runner serve behind a proxy: --trust-proxy', { timeout: 120_000 }, () => {
  const data = dataDir();
  let key = '';
  const env = { RUNNER_SIGN_IN_FAILURES: '3', RUNNER_SIGN_IN_FAILURES_PER_NAME: '100' };

  beforeAll(async () => {
    const added = await run([
      'operators',
      'add',
      'ada',
      '--role',
      'admin',
      '--json',
      '--data',
      data,
    ]);
    expect(added.code, added.stderr).toBe(0);
    key = added.events.find((e) => e.type === 'operator-added')?.key as string;
  }, 120_000);

  /** Three wrong keys from `who`, then the right key from `other`: its status. */
  async function lockout(served: Served, who: string, other: string): Promise<number> {
    const signIn = (forwardedFor: string, k: string) =>
      call(
        new URL('/api/sign-in', served.url).toString(),
        json({ key: k }, { 'x-forwarded-for': forwardedFor }),
      );
    for (let i = 0; i < 3; i++) expect((await signIn(who, 'wrong')).status).toBe(401);
    expect((await signIn(who, key)).status).toBe(429);
    return (await signIn(other, key)).status;
  }

  it('off by default: X-Forwarded-For is ignored, and one client locks out every other behind the proxy', async () => {
    const served = await serve(['--no-wake', '--data', data], env);
    try {
      expect(await lockout(served, '203.0.113.5', '203.0.113.6')).toBe(429);
    } finally {
      await served.stop();
    }
  });

  it("with the proxy trusted: one client's failures lock out only that client, and the audit names it", async () => {
    const served = await serve(
      ['--no-wake', '--data', data, '--trust-proxy', '127.0.0.1,::1'],
      env,
    );
    try {
      // A client behind another (untrusted) hop: the address the trusted proxy saw counts.
      expect(await lockout(served, '198.51.100.1, 203.0.113.7', '203.0.113.8')).toBe(200);
    } finally {
      await served.stop();
    }
    const audit = await run(['audit', '--json', '--data', data]);
    const sources = audit.events
      .filter((e) => e.type === 'audit-entry' && e.kind === 'app-event')
      .map((e) => e.data as { event?: string; source?: string })
      .filter((d) => d.event === 'sign-in-failed')
      .map((d) => d.source);
    expect(sources.slice(-3)).toEqual(['203.0.113.7', '203.0.113.7', '203.0.113.7']);
  });
});
