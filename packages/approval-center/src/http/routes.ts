import type { IncomingMessage, ServerResponse } from 'node:http';
import { unstorableText } from '@x/postgres-kit';
import { ApprovalCenterError } from '../errors.js';

/** One API route: its method, its path as a pattern (the groups are the path's parts), its handler. */
export interface Route<Context> {
  method: 'GET' | 'POST';
  pattern: RegExp;
  handle: (
    context: Context,
    match: string[],
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
  ) => Promise<void>;
}

/**
 * Answers `req` by the first of `routes` whose pattern and method match its path.
 * @returns false when no route has its path.
 * @throws {ApprovalCenterError} `method_not_allowed` (the `allow` header names the methods)
 *   when routes have its path but not its method; `invalid_request` for a query no database
 *   could take (a NUL, a lone surrogate).
 */
export async function answerRoute<Context>(
  routes: readonly Route<Context>[],
  context: Context,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  const matching = routes
    .map((route) => ({ route, match: route.pattern.exec(url.pathname) }))
    .filter((r) => r.match !== null);
  if (matching.length === 0) return false;
  // Refused before it reaches a database.
  for (const [name, value] of url.searchParams) {
    const unstorable = unstorableText(value) ?? unstorableText(name);
    if (unstorable !== undefined) {
      throw new ApprovalCenterError(
        'invalid_request',
        `the query parameter ${JSON.stringify(name)} holds ${unstorable}, which cannot be stored`,
      );
    }
  }
  const hit = matching.find((r) => r.route.method === req.method);
  if (!hit) {
    const allowed = [...new Set(matching.map((r) => r.route.method))].join(', ');
    res.setHeader('allow', allowed);
    throw new ApprovalCenterError(
      'method_not_allowed',
      `${req.method} is not allowed here; use ${allowed}`,
    );
  }
  await hit.route.handle(context, hit.match?.slice(1) ?? [], req, res, url);
  return true;
}

/**
 * A path segment, decoded. One that no database could hold (a NUL, a lone surrogate) names
 * nothing: 404 (`pause_not_found` for a question's token), never asked of the database.
 */
export function pathSegment(text: string, what: 'token' | 'id' = 'id'): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    throw new ApprovalCenterError('invalid_request', 'malformed percent-encoding in the path');
  }
  const unstorable = unstorableText(decoded);
  if (unstorable === undefined) return decoded;
  if (what === 'token') {
    throw new ApprovalCenterError(
      'pause_not_found',
      `no question has the token ${JSON.stringify(decoded)}: it holds ${unstorable}, which no token does`,
      { details: { tokens: [decoded] } },
    );
  }
  throw new ApprovalCenterError(
    'not_found',
    `nothing is named ${JSON.stringify(decoded)}: it holds ${unstorable}`,
  );
}

/** The largest `?limit=` a list route takes. */
const MAX_LIMIT = 1000;

/** The request's `?limit=`, from 1 to 1000, or `fallback` without one. */
export function limitOf(url: URL, fallback: number): number {
  const text = url.searchParams.get('limit');
  if (text === null) return fallback;
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new ApprovalCenterError(
      'invalid_request',
      `limit takes a whole number from 1 to ${MAX_LIMIT}`,
    );
  }
  return limit;
}
