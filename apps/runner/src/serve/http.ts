import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { withoutOrigin } from '../errors.js';
import type { Storage } from '../storage/index.js';
import { HttpError } from './http-error.js';

/** Largest request body the API reads (larger ones get 413). */
export const MAX_BODY_BYTES = 64 * 1024;

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Compares two secrets in constant time (equal-length digests, so no length leak). */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** True for an address only this machine can reach. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
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
    throw new HttpError(
      403,
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
    throw new HttpError(
      415,
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
    throw new HttpError(
      403,
      'cross_origin',
      `writes are accepted only from this server's own page, not from origin "${origin}"`,
    );
  }
}

/** Reads a JSON body of at most `limit` bytes; an empty body is `{}`. */
export async function readJson(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  const tooLarge = () =>
    new HttpError(413, 'payload_too_large', `request bodies are limited to ${limit} bytes`);
  if (declared > limit) {
    req.resume();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Keep draining (not storing) so the client can read the 413; a flood is cut off.
    if (size > limit) over = true;
    if (size > limit * 16) {
      req.destroy();
      break;
    }
    if (!over) chunks.push(chunk);
  }
  if (over) throw tooLarge();
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(
      400,
      'invalid_json',
      `the body is not valid JSON: ${(error as Error).message}`,
      undefined,
      error,
    );
  }
}

/**
 * A route of a channel outside the API (a decision link, Slack's interactivity), with its own
 * credential: true when it answered the request.
 */
export type ChannelRoute = (
  storage: Storage,
  answered: () => void,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
) => Promise<boolean>;

/** Headers every response carries. */
const baseHeaders = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

/** Sends a JSON response. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...baseHeaders,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Sends `{ "error": { "code", "message", ...details } }`. */
export function sendError(res: ServerResponse, error: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A refusal that lifts with time (429) says when, as well as in its body.
  const retryAfter = error.details?.retryAfter;
  if (typeof retryAfter === 'number') res.setHeader('retry-after', String(retryAfter));
  sendJson(res, error.status, {
    error: { code: error.code, message: withoutOrigin(error.message), ...error.details },
  });
}

export { baseHeaders };
