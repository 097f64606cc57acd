import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import { BlockList, isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ApprovalCenterErrorCode } from '@x/approval-center';
import { rememberSource } from '@x/approval-center';
import { baseHeaders } from '@x/approval-center/http';
import { VARIABLES } from '../config/index.js';

/** How `serve` bounds its connections (each has a RUNNER_* variable and a flag). */
export interface ConnectionLimits {
  /** Connections open at once; one more is answered 503 and closed. */
  maxConnections: number;
  /** How long a request's headers may take to arrive, from its first byte (or the connection). */
  headersTimeoutMs: number;
  /** How long its body may take on top of that: the whole request has headers + body. */
  bodyTimeoutMs: number;
  /** How long a kept-alive connection may wait idle for its next request. */
  idleTimeoutMs: number;
  /** Proxies whose X-Forwarded-For names the client (addresses or subnets); none: off. */
  trustProxy: readonly string[];
}

/** The limits of {@link ConnectionLimits} as their variables' defaults set them. */
export const DEFAULT_LIMITS: ConnectionLimits = {
  maxConnections: VARIABLES.RUNNER_MAX_CONNECTIONS.default,
  headersTimeoutMs: VARIABLES.RUNNER_HEADERS_TIMEOUT.default,
  bodyTimeoutMs: VARIABLES.RUNNER_BODY_TIMEOUT.default,
  idleTimeoutMs: VARIABLES.RUNNER_IDLE_TIMEOUT.default,
  trustProxy: [],
};

/** A refused connection is closed at the latest this long after its 503. */
const REFUSED_CLOSE_MS = 5_000;

/** An error response written straight to a socket, for the errors Node meets before any request. */
function rawError(
  status: number,
  code: ApprovalCenterErrorCode,
  message: string,
  extra = '',
): string {
  const body = JSON.stringify({ error: { code, message } });
  const headers = Object.entries(baseHeaders).map(([name, value]) => `${name}: ${value}\r\n`);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${headers.join('')}` +
    `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    `connection: close\r\n${extra}\r\n${body}`
  );
}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/**
 * Answers what Node's HTTP parser refuses itself with the API's `{"error":{"code","message"}}`
 * (instead of its bare status line): 431 for headers too large, 408 for a request that did
 * not arrive in time, 400 for a request that is not well-formed HTTP; then the connection
 * closes. A response already begun on the connection is not followed by another.
 */
export function answerClientError(
  limits: Pick<ConnectionLimits, 'headersTimeoutMs' | 'bodyTimeoutMs'> | undefined,
): (error: Error & { code?: string; reason?: string }, socket: Duplex) => void {
  return (error, socket) => {
    const begun = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage
      ?.headersSent;
    if (error.code === 'ECONNRESET' || !socket.writable || begun) {
      socket.destroy();
      return;
    }
    let reply: string;
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      reply = rawError(
        431,
        'headers_too_large',
        "the request's headers are too large (at most 16 KiB in all): send fewer or shorter ones",
      );
    } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      const within = limits
        ? `: headers within ${seconds(limits.headersTimeoutMs)}, the whole request within ${seconds(limits.headersTimeoutMs + limits.bodyTimeoutMs)}`
        : '';
      reply = rawError(408, 'request_timeout', `the request did not arrive in time${within}`);
    } else {
      const reason = error.reason ?? error.code ?? 'malformed';
      reply = rawError(400, 'bad_request', `the request is not well-formed HTTP/1.1: ${reason}`);
    }
    socket.end(reply);
  };
}

/**
 * Keeps at most `max` connections open: one more is answered 503 `too_many_connections`
 * (with Retry-After) and closed, and no request of it is served.
 */
function capConnections(server: Server, max: number, refused: WeakSet<Socket>): void {
  let open = 0;
  server.on('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => {
      open--;
    });
    if (open <= max) return;
    refused.add(socket);
    socket.end(
      rawError(
        503,
        'too_many_connections',
        `this server keeps at most ${max} connections open at once (--max-connections): try again shortly`,
        'retry-after: 1\r\n',
      ),
    );
    setTimeout(() => socket.destroy(), REFUSED_CLOSE_MS).unref();
  });
}

/**
 * The address a request came from: the connection's, or, when that is a trusted proxy's,
 * the client X-Forwarded-For names (the right-most address not itself a trusted proxy).
 */
function clientAddress(req: IncomingMessage, trusted: BlockList | undefined): string {
  const remote = req.socket.remoteAddress ?? 'unknown';
  if (!trusted || !isTrusted(trusted, remote)) return remote;
  const forwarded = String(req.headers['x-forwarded-for'] ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  let client = remote;
  for (const address of forwarded.reverse()) {
    // What a trusted proxy passed on is believed as far as it is an address.
    if (isIP(address) === 0) break;
    client = address;
    if (!isTrusted(trusted, address)) break;
  }
  return client;
}

function isTrusted(trusted: BlockList, address: string): boolean {
  const plain = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  const family = isIP(plain);
  return family !== 0 && trusted.check(plain, family === 4 ? 'ipv4' : 'ipv6');
}

/** The trusted proxies as a BlockList, or undefined for none. */
function trustedProxies(entries: readonly string[]): BlockList | undefined {
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return list;
}

/**
 * Calls `handle` for each request of a connection only once the one before it has been
 * answered: a pipelined read after a write sees what the write did (Node would start both
 * at once, and only send their responses in order).
 */
export function inOrder(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  const last = new WeakMap<Socket, Promise<void>>();
  return (req, res) => {
    const before = last.get(req.socket);
    const answered = new Promise<void>((resolve) => res.once('close', resolve));
    last.set(req.socket, answered);
    if (before) void before.then(() => handle(req, res));
    else handle(req, res);
  };
}

/**
 * The approval center's HTTP server: requests of a connection answered in order, Node's own
 * refusals in the API's error shape, at most `maxConnections` open, the headers, body and
 * idle timeouts, and each request's client address (through trusted proxies) remembered
 * for the sign-in limits.
 */
export function createApiServer(
  limits: ConnectionLimits,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Server {
  const trusted = trustedProxies(limits.trustProxy);
  const refused = new WeakSet<Socket>();
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.headersTimeoutMs + limits.bodyTimeoutMs,
      keepAliveTimeout: limits.idleTimeoutMs,
      // The timeouts are checked this often (Node's default, 30 s, would let them run over).
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
    },
    inOrder((req, res) => {
      // A connection over the cap was answered 503 and is closing: none of its requests runs.
      if (refused.has(req.socket)) return;
      rememberSource(req, clientAddress(req, trusted));
      handle(req, res);
    }),
  );
  capConnections(server, limits.maxConnections, refused);
  server.on('clientError', answerClientError(limits));
  return server;
}
