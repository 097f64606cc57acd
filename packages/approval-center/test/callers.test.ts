import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendJson } from '../src/http/index.js';
import {
  answererOf,
  type CenterRoutes,
  callerOf,
  createApprovalCenter,
  type ErrorResponse,
  FailureLimiter,
  handleSignIn,
  type KeyOperator,
  memorySignInStore,
  type OperatorKeys,
  PageSignIns,
  requireAdmin,
  type SessionResponse,
  type SignInContext,
} from '../src/index.js';

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
});

const ada: KeyOperator = { name: 'ada', access: 'operator', roles: ['operator'], keyId: 'k1' };
const vic: KeyOperator = { name: 'vic', access: 'viewer', roles: ['viewer'], keyId: 'k2' };

/** Operators in memory: each key names one live operator. */
function operatorKeys(keys: Record<string, KeyOperator>): OperatorKeys {
  return {
    anyLive: async () => Object.keys(keys).length > 0,
    ownerOf: async (key) => keys[key]?.name,
    authenticate: async (key) => keys[key],
  };
}

function signInOf(operators: OperatorKeys, more: Partial<SignInContext> = {}): SignInContext {
  return {
    operators,
    token: undefined,
    operator: null,
    sessions: new PageSignIns(
      memorySignInStore((name) =>
        name === ada.name ? { keyId: ada.keyId, roles: ['operator'] } : undefined,
      ),
      { ttlMs: 60_000, secure: false },
    ),
    limiters: {
      source: new FailureLimiter({ max: 2, windowMs: 60_000 }),
      name: new FailureLimiter({ max: 5, windowMs: 60_000 }),
    },
    ...more,
  };
}

/** The sign-in routes, then `/api/whoami` (who called) and `/api/answer` (how they would answer). */
function routesOf(signIn: SignInContext): CenterRoutes {
  return async (req, res, url, request) => {
    if (await handleSignIn(signIn, req, res, url.pathname, request)) return true;
    const caller = await callerOf(signIn, req, request);
    if (url.pathname === '/api/whoami') sendJson(res, 200, caller);
    else if (url.pathname === '/api/answer') sendJson(res, 200, answererOf(caller));
    else if (url.pathname === '/api/admin') {
      requireAdmin(caller, 'look here');
      sendJson(res, 200, {});
    } else return false;
    return true;
  };
}

async function serve(signIn: SignInContext): Promise<string> {
  const server = createServer(createApprovalCenter({ routes: routesOf(signIn) }));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
const codeOf = async (response: Response) => ((await response.json()) as ErrorResponse).error.code;

describe('callerOf and the sign-in routes over the host operators', () => {
  it('answers as the local admin while nothing needs a key', async () => {
    const base = await serve(signInOf(operatorKeys({}), { operator: 'me' }));
    const who = await (await fetch(`${base}/api/whoami`)).json();
    expect(who).toMatchObject({ name: 'me', access: 'admin', signedInWith: 'local' });
    const session = (await (await fetch(`${base}/api/session`)).json()) as SessionResponse;
    expect(session.methods).toEqual([]);
  });

  it("signs in an operator's key; refuses a wrong one, then limits the source", async () => {
    const base = await serve(signInOf(operatorKeys({ 'key-ada': ada })));
    expect((await fetch(`${base}/api/whoami`)).status).toBe(401);
    const who = await (await fetch(`${base}/api/whoami`, bearer('key-ada'))).json();
    expect(who).toMatchObject({ name: 'ada', access: 'operator', signedInWith: 'key' });
    const wrong = await fetch(`${base}/api/whoami`, bearer('nope'));
    expect(wrong.status).toBe(401);
    await fetch(`${base}/api/whoami`, bearer('nope'));
    const limited = await fetch(`${base}/api/whoami`, bearer('key-ada'));
    expect(limited.status).toBe(429);
    expect(await codeOf(limited)).toBe('rate_limited');
  });

  it('opens a page sign-in for a key and ends it on sign-out', async () => {
    const base = await serve(signInOf(operatorKeys({ 'key-ada': ada })));
    const json = { 'content-type': 'application/json' };
    const opened = await fetch(`${base}/api/sign-in`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ key: 'key-ada' }),
    });
    expect(opened.status).toBe(200);
    const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const { csrfToken } = (await opened.json()) as SessionResponse;
    const session = (await (
      await fetch(`${base}/api/session`, { headers: { cookie } })
    ).json()) as SessionResponse;
    expect(session).toMatchObject({ signedIn: true, name: 'ada', methods: ['key'] });
    const out = await fetch(`${base}/api/sign-out`, {
      method: 'POST',
      headers: { ...json, cookie, 'x-csrf-token': csrfToken ?? '' },
    });
    expect(out.status).toBe(200);
    const after = (await (
      await fetch(`${base}/api/session`, { headers: { cookie } })
    ).json()) as SessionResponse;
    expect(after.signedIn).toBe(false);
  });

  it('refuses a viewer an answer and a non-admin the admin routes', async () => {
    const base = await serve(signInOf(operatorKeys({ 'key-ada': ada, 'key-vic': vic })));
    const viewer = await fetch(`${base}/api/answer`, bearer('key-vic'));
    expect(viewer.status).toBe(403);
    expect(await codeOf(viewer)).toBe('forbidden');
    const by = await (await fetch(`${base}/api/answer`, bearer('key-ada'))).json();
    expect(by).toMatchObject({ identity: { name: 'ada' }, signedInWith: 'key', channel: 'api' });
    expect((await fetch(`${base}/api/admin`, bearer('key-ada'))).status).toBe(403);
  });

  it('takes a request the host vouches for as its admin', async () => {
    const hostAdmin = (req: { headers: Record<string, unknown> }) =>
      req.headers['x-test-host'] === 'yes' ? 'owner' : undefined;
    const base = await serve(signInOf(operatorKeys({ 'key-ada': ada }), { hostAdmin }));
    const who = await (
      await fetch(`${base}/api/whoami`, { headers: { 'x-test-host': 'yes' } })
    ).json();
    expect(who).toMatchObject({ name: 'owner', access: 'admin', signedInWith: 'os-user' });
    expect((await fetch(`${base}/api/admin`, { headers: { 'x-test-host': 'yes' } })).status).toBe(
      200,
    );
  });
});
