import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppOperator,
  ApprovalCenterError,
  type Authenticate,
  authenticatedBy,
  cookieOf,
} from '../src/index.js';

// An app's own sign-in through `authenticate`: a server on 127.0.0.1 whose requests carry the
// app's session cookie, answered with who `authenticatedBy` says sent them (or the refusal).

/** The app's own sessions: cookie value -> who signed in (what `authenticate` returns). */
const appSessions = new Map<string, unknown>([
  ['s-ada', { name: 'ada@team.example', roles: ['admin', 'finance'] }],
  ['s-bob', { name: 'bob', roles: ['finance', 'finance'] }],
  ['s-vic', { name: 'vic', roles: ['viewer'] }],
  ['s-none', { name: 'nemo', roles: [] }],
  ['s-bad-role', { name: 'eve', roles: ['Finance Desk'] }],
  ['s-bad-name', { name: 'a\u0000b', roles: ['operator'] }],
]);
const authenticate: Authenticate = async (req) =>
  appSessions.get(cookieOf(req, 'app_session') ?? '') as AppOperator | undefined;

describe('authenticate: an app signs its operators in itself', () => {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      authenticatedBy(authenticate, req).then(
        (who) => res.writeHead(200).end(JSON.stringify({ who: who ?? null })),
        (error: unknown) => {
          const known = ApprovalCenterError.is(error);
          res.writeHead(known ? error.status : 500).end(
            JSON.stringify({
              code: known ? error.code : 'internal',
              reason: known ? error.reason : '',
            }),
          );
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const as = async (session?: string) => {
    const response = await fetch(url, {
      headers: session ? { cookie: `theme=dark; app_session=${session}` } : {},
    });
    const body = (await response.json()) as { who?: unknown; code?: string; reason?: string };
    return { status: response.status, body };
  };

  it('gives the operator their access role first, then their audience roles once', async () => {
    expect(await as('s-ada')).toEqual({
      status: 200,
      body: { who: { name: 'ada@team.example', access: 'admin', roles: ['admin', 'finance'] } },
    });
    expect((await as('s-bob')).body.who).toEqual({
      name: 'bob',
      access: 'operator',
      roles: ['operator', 'finance'],
    });
    expect((await as('s-vic')).body.who).toMatchObject({ access: 'viewer', roles: ['viewer'] });
  });

  it('knows nobody when the app knows nobody', async () => {
    expect(await as()).toEqual({ status: 200, body: { who: null } });
    expect(await as('s-unknown')).toEqual({ status: 200, body: { who: null } });
  });

  it('refuses what the app got wrong, and a person without a role', async () => {
    expect(await as('s-none')).toEqual({
      status: 403,
      body: { code: 'forbidden', reason: 'nemo is signed in, but has no role here' },
    });
    const role = await as('s-bad-role');
    expect(role.body.code).toBe('invalid_argument');
    expect(role.body.reason).toContain('"Finance Desk" as a role of eve');
    expect((await as('s-bad-name')).body.code).toBe('invalid_argument');
  });
});
