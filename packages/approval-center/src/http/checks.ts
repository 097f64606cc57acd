import type { IncomingMessage } from 'node:http';
import { ApprovalCenterError } from '../errors.js';

/** True for an address only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Headers a request may carry once: a second one (of another value) would be ambiguous. */
const SINGLE_HEADERS = [
  'host',
  'authorization',
  'content-type',
  'content-length',
  'origin',
  'x-csrf-token',
];

/**
 * Refuses a request that carries one of {@link SINGLE_HEADERS} twice (Node keeps the first
 * and drops the other): two Host headers are a 400 by RFC 9112, and two of the others could
 * be read differently by a proxy in front.
 * @throws {ApprovalCenterError} 400 naming the header.
 */
export function checkSingleHeaders(req: IncomingMessage): void {
  const seen = new Set<string>();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] ?? '').toLowerCase();
    if (!SINGLE_HEADERS.includes(name)) continue;
    if (seen.has(name)) {
      throw new ApprovalCenterError(
        'bad_request',
        `the request has more than one ${name} header; HTTP/1.1 allows one (RFC 9112)`,
      );
    }
    seen.add(name);
  }
}

/**
 * On a loopback bind, only requests addressed to a loopback name are served: a page of
 * another site that re-points its own name at 127.0.0.1 (DNS rebinding) sends its own
 * name as Host and is refused.
 */
export function checkHost(req: IncomingMessage): void {
  const host = req.headers.host ?? '';
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.split(':')[0];
  if (!name || !isLoopback(name)) {
    throw new ApprovalCenterError(
      'forbidden_host',
      `this server answers only to localhost names, not "${host}"; bind another --host with a --token to serve other names`,
    );
  }
}

/**
 * A write must be JSON and, when the browser names its origin, come from this server's own
 * page: a form or script on another site cannot answer questions through the operator's
 * browser (a cross-site form cannot send application/json without a CORS preflight, which
 * this server never grants).
 */
export function checkWrite(req: IncomingMessage): void {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new ApprovalCenterError(
      'unsupported_media_type',
      'writes take a JSON body: send "Content-Type: application/json"',
    );
  }
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let originHost: string | undefined;
  try {
    originHost = origin === 'null' ? undefined : new URL(origin).host;
  } catch {
    originHost = undefined;
  }
  if (!originHost || originHost !== req.headers.host) {
    throw new ApprovalCenterError(
      'cross_origin',
      `writes are accepted only from this server's own page, not from origin "${origin}"`,
    );
  }
}
