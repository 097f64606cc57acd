import type { IncomingMessage } from 'node:http';
import { unstorableText } from '@x/postgres-kit';
import { ApprovalCenterError } from '../errors.js';

/**
 * Largest request body the API reads (larger ones get 413): room for an answer of the
 * longest content taken (16,384 characters, each up to 6 bytes as a JSON escape) and more,
 * or a batch of many short answers.
 */
export const MAX_BODY_BYTES = 256 * 1024;

/** How long the rest of a refused (413) body is read and dropped at most, before its 413. */
const DRAIN_MS = 10_000;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The 413 of a body over `limit` bytes, naming the limit. */
function tooLarge(limit: number): ApprovalCenterError {
  const kib = limit % 1024 === 0 ? ` (${limit / 1024} KiB)` : '';
  return new ApprovalCenterError(
    'payload_too_large',
    `request bodies are limited to ${limit.toLocaleString('en-US')} bytes${kib}`,
    { details: { limit } },
  );
}

/** How much of a refused body is read and dropped at most, before its 413. */
const DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * Reads the rest of a refused body and drops it; resolves when it ended, so the 413 goes out
 * after it and the client, done sending, reads it (a connection closed while the client
 * still sends is reset, and the client may never see the response). A body still coming
 * after {@link DRAIN_MS} or {@link DRAIN_BYTES} resolves too, and its connection is cut
 * shortly after the 413.
 */
function drained(req: IncomingMessage): Promise<void> {
  req.on('data', () => {});
  req.resume();
  return new Promise((resolve) => {
    let size = 0;
    const stop = () => {
      clearTimeout(timer);
      req.off('data', count);
      resolve();
    };
    const cut = () => {
      stop();
      setTimeout(() => req.socket.destroy(), 1_000).unref();
    };
    const count = (chunk: Buffer) => {
      size += chunk.length;
      if (size > DRAIN_BYTES) cut();
    };
    const timer = setTimeout(cut, DRAIN_MS);
    timer.unref();
    req.on('data', count);
    req.once('end', stop);
    req.once('close', stop);
  });
}

/**
 * Reads a body of at most `limit` bytes.
 * @throws {ApprovalCenterError} 413 once it is over the limit (the rest read and dropped first),
 *   400 when the client stops sending it midway.
 */
function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  // A client that goes away midway is no error of this process's.
  req.on('error', () => {});
  if (declared > limit) return drained(req).then(() => Promise.reject(tooLarge(limit)));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onCut);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      stop();
      void drained(req).then(() => reject(tooLarge(limit)));
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onCut = () => {
      stop();
      reject(new ApprovalCenterError('invalid_request', 'the request body was cut short'));
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onCut);
  });
}

/**
 * The first string of `value` (a key or a value, at any depth) that no database stores, as
 * its place and what it holds: `"content" holds a NUL character (U+0000)`.
 */
function unstorableIn(value: unknown, where = ''): string | undefined {
  const at = (place: string) => (place === '' ? 'the body' : `"${place}"`);
  if (typeof value === 'string') {
    const problem = unstorableText(value);
    return problem === undefined ? undefined : `${at(where)} holds ${problem}`;
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = unstorableIn(item, `${where}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const place = where === '' ? key : `${where}.${key}`;
      const problem = unstorableText(key);
      if (problem) return `a name in ${at(where)} holds ${problem}`;
      const found = unstorableIn(item, place);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Reads a JSON body of at most `limit` bytes; an empty body is `{}`.
 * @throws {ApprovalCenterError} 413 over the limit, 400 `invalid_json` for a body that is not UTF-8 or
 *   not JSON, 400 `invalid_request` for a string that no database stores (a NUL, a lone
 *   surrogate): refused here, before anything reaches the database (`unstorable: 'keep'`
 *   leaves that to the caller, who checks the body's every string).
 */
export async function readJson(
  req: IncomingMessage,
  limit = MAX_BODY_BYTES,
  options: { unstorable?: 'refuse' | 'keep' } = {},
): Promise<unknown> {
  const buffer = await readBody(req, limit);
  let text: string;
  try {
    text = utf8.decode(buffer);
  } catch (error) {
    throw new ApprovalCenterError(
      'invalid_json',
      'the body is not valid UTF-8: send JSON encoded as UTF-8',
      { cause: error },
    );
  }
  if (text.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new ApprovalCenterError(
      'invalid_json',
      `the body is not valid JSON: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const unstorable = options.unstorable === 'keep' ? undefined : unstorableIn(body);
  if (unstorable) {
    throw new ApprovalCenterError(
      'invalid_request',
      `${unstorable}, which cannot be stored: remove it and send again; nothing was changed`,
    );
  }
  return body;
}
