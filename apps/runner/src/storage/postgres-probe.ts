import net from 'node:net';

/** Where {@link probeServer} connects: a TCP host and port, or a Unix socket's path. */
interface ProbeTarget {
  host?: string | undefined;
  port?: number | undefined;
  /** A Unix socket, e.g. `/var/run/postgresql/.s.PGSQL.5432`; then host and port are unused. */
  path?: string | undefined;
  /** How long to wait for the connection and the answer. */
  timeoutMs: number;
}

/** What a server answered to the first message of a PostgreSQL connection. */
interface ServerProbe {
  /** It answered as PostgreSQL (or a pooler in front of it) does. */
  postgres: boolean;
  /** It offers TLS (only meaningful when `postgres`). */
  tls: boolean;
  /** When not `postgres`: what was wrong, in words (silent, hung up, or another protocol). */
  problem?: string;
}

// SSLRequest: length 8, then the code 80877103; a server answers it with one byte.
const SSL_REQUEST = new Uint8Array([0, 0, 0, 8, 4, 210, 22, 47]);
const [S, N, E] = [0x53, 0x4e, 0x45];

/** The verdict on what arrived so far, or undefined while it cannot tell yet. */
function verdict(answer: Uint8Array): ServerProbe | undefined {
  const first = answer[0];
  if (answer.length === 1 && (first === S || first === N))
    return { postgres: true, tls: first === S };
  // An ErrorResponse ('E', then its int32 length) is how a server refuses before TLS.
  if (first === E) {
    if (answer.length < 5) return undefined;
    const length = new DataView(answer.buffer, answer.byteOffset).getUint32(1);
    if (length >= 4 && length < 65_536) return { postgres: true, tls: false };
  }
  const line = Buffer.from(answer.subarray(0, 60)).toString('latin1').split(/\r?\n/)[0] ?? '';
  return {
    postgres: false,
    tls: false,
    problem: `the server does not speak the PostgreSQL protocol (it answered ${JSON.stringify(line)})`,
  };
}

/**
 * Asks the server whether it speaks PostgreSQL, as every client's connection starts (an
 * SSLRequest, answered by one byte), then hangs up. A driver handed a listener that is not
 * PostgreSQL can wait forever (postgres.js 3.4.9 reconnects to an HTTP server that answers
 * and hangs up, again and again); this answers within `timeoutMs`. Rejects with the socket's
 * error (`ECONNREFUSED`, `ENOTFOUND`, ...) when no connection can be made.
 *
 * @example
 * const probe = await probeServer({ host: '127.0.0.1', port: 5432, timeoutMs: 5_000 });
 * if (!probe.postgres) throw new Error(`not PostgreSQL: ${probe.problem}`);
 * if (!probe.tls) console.log('this server offers no TLS');
 */
export function probeServer(target: ProbeTarget): Promise<ServerProbe> {
  return new Promise((resolve, reject) => {
    const socket = target.path
      ? net.connect({ path: target.path })
      : net.connect({ host: target.host ?? 'localhost', port: target.port ?? 5432 });
    let answer = new Uint8Array(0);
    let connected = false;
    const settle = (result: ServerProbe | Error) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => {});
      socket.destroy();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const seconds = target.timeoutMs / 1000;
    const timer = setTimeout(
      () =>
        settle({
          postgres: false,
          tls: false,
          problem: !connected
            ? `no connection within ${seconds} s (connect_timeout)`
            : answer.length
              ? 'the server does not speak the PostgreSQL protocol (its answer is incomplete)'
              : `the server accepted the connection but did not answer within ${seconds} s (connect_timeout)`,
        }),
      target.timeoutMs,
    );
    socket.once('connect', () => {
      connected = true;
      socket.write(SSL_REQUEST);
    });
    socket.on('data', (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      const known = verdict(answer);
      if (known) settle(known);
    });
    const hungUp: ServerProbe = {
      postgres: false,
      tls: false,
      problem: 'the server closed the connection without answering as PostgreSQL does',
    };
    // A reset once connected is a hang-up too; before that it is the connection's own error.
    socket.once('error', (error) => settle(connected ? hungUp : error));
    socket.once('close', () => settle(hungUp));
  });
}
