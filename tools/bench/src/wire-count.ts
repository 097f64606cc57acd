// A TCP proxy on 127.0.0.1 in front of the server that counts, on the wire, what clients
// connected through it ask: statements, round trips and transactions (those that wrote).
// Plain connections only (no TLS): the server's messages are read as they pass.
import { createServer, type Socket, connect as tcpConnect } from 'node:net';

/** What the clients of a {@link WireCounter} did since its last reset. */
export interface WireCounts {
  /** Statements executed (CommandComplete or ErrorResponse), BEGIN/COMMIT/ROLLBACK left out. */
  statements: number;
  /** Times a client sent after the server had answered it: waits for the server. */
  roundTrips: number;
  /** Transactions ended (ReadyForQuery idle after statements), implicit ones included. */
  transactions: number;
  /**
   * Of those, the ones with a statement that wrote a row: an INSERT/UPDATE/DELETE/MERGE of ≥ 1,
   * or a statement whose text writes (a CTE's) that returned a row.
   */
  writing: number;
  /** The command tags seen, with their counts. */
  tags: Record<string, number>;
}

const FRAMING = new Set(['BEGIN', 'COMMIT', 'ROLLBACK']);

const WRITES = /\b(insert|update|delete|merge)\b/i;

/**
 * Splits a stream of protocol messages (type byte, int32 length) into calls of `onMessage`;
 * `untyped` skips the client's first message (the startup message has no type byte).
 */
function reader(onMessage: (type: string, body: Buffer) => void, untyped = false) {
  let pending: Buffer = Buffer.alloc(0);
  let skip = untyped;
  return (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    if (skip) {
      if (pending.length < 4) return;
      const length = pending.readInt32BE(0);
      if (pending.length < length) return;
      pending = pending.subarray(length);
      skip = false;
    }
    while (pending.length >= 5) {
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) return;
      onMessage(String.fromCharCode(pending[0] as number), pending.subarray(5, 1 + length));
      pending = pending.subarray(1 + length);
    }
  };
}

/** Starts the proxy in front of `target` (a postgres:// URL); connect through `url`. */
export async function startWireCounter(target: string) {
  const to = new URL(target);
  const counts: WireCounts = {
    statements: 0,
    roundTrips: 0,
    transactions: 0,
    writing: 0,
    tags: {},
  };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = tcpConnect(Number(to.port || 5432), to.hostname);
    sockets.add(client).add(upstream);
    let last: 'client' | 'server' = 'server';
    let inTransaction = { statements: 0, wrote: false };
    // The texts of the connection's prepared statements, and whether each statement executed
    // (in the order the server completes them) is one whose text writes.
    const prepared = new Map<string, string>();
    const executed: boolean[] = [];
    const cstrings = (body: Buffer) => body.toString('utf8').split('\0');
    const fromClient = reader((type, body) => {
      if (type === 'P') {
        const [name = '', text = ''] = cstrings(body);
        prepared.set(name, text);
      } else if (type === 'B') {
        executed.push(WRITES.test(prepared.get(cstrings(body)[1] ?? '') ?? ''));
      } else if (type === 'Q') {
        executed.push(WRITES.test(cstrings(body)[0] ?? ''));
      }
    }, true);
    const fromServer = reader((type, body) => {
      if (type === 'C' || type === 'E') {
        const tag = type === 'C' ? body.toString('utf8', 0, body.length - 1) : 'ERROR';
        const verb = tag.split(' ')[0] ?? tag;
        counts.tags[verb] = (counts.tags[verb] ?? 0) + 1;
        if (!FRAMING.has(verb)) {
          counts.statements++;
          inTransaction.statements++;
        }
        const rows = Number(tag.split(' ').at(-1));
        const writes = executed.shift() ?? false;
        if (
          rows > 0 &&
          (['INSERT', 'UPDATE', 'DELETE', 'MERGE'].includes(verb) || (writes && verb === 'SELECT'))
        ) {
          inTransaction.wrote = true;
        }
      } else if (type === 'Z' && body[0] === 0x49 && inTransaction.statements > 0) {
        counts.transactions++;
        if (inTransaction.wrote) counts.writing++;
        inTransaction = { statements: 0, wrote: false };
      }
    });
    client.on('data', (chunk: Buffer) => {
      if (last === 'server') counts.roundTrips++;
      last = 'client';
      fromClient(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      last = 'server';
      fromServer(chunk);
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no proxy address');
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(address.port);
  return {
    url: url.toString(),
    /** The counts since the last reset, then zeroed. */
    take(): WireCounts {
      const taken = { ...counts, tags: { ...counts.tags } };
      Object.assign(counts, {
        statements: 0,
        roundTrips: 0,
        transactions: 0,
        writing: 0,
        tags: {},
      });
      return taken;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
