import { createServer, type Server } from 'node:http';
import { cookieJar, follow, freePort, startProvider, type TestProvider } from '@internal/pg-test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApprovalCenter,
  createApprovalCenter,
  FailureLimiter,
  memorySignInStore,
  Oidc,
  PageSignIns,
} from '../src/index.js';

// createApprovalCenter({ oidc }) signs the page in through a real OpenID provider
// (oidc-provider on 127.0.0.1) under a mount path: the login and callback routes, the state
// cookie, the sign-in opened in the given sessions, and a failed callback's page and limit.

describe('the center’s OpenID Connect routes under /approvals', { timeout: 30_000 }, () => {
  let provider: TestProvider;
  let center: ApprovalCenter;
  let server: Server;
  let base: string;
  let callback: string;
  const sessions = new PageSignIns(memorySignInStore(), { ttlMs: 60_000, secure: false });
  // Two failed callbacks from an address are answered; the third within the window is refused.
  const limit = { max: 2, windowMs: 60_000 };
  const limiters = { source: new FailureLimiter(limit), name: new FailureLimiter(limit) };

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    callback = `${base}/approvals/auth/oidc/callback`;
    provider = await startProvider({
      pageClient: {
        client_id: 'approvals-page',
        token_endpoint_auth_method: 'none',
        redirect_uris: [callback],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
      users: [{ name: 'bob', groups: ['approvers'] }],
    });
    const oidc = await Oidc.discover({
      issuer: provider.issuer,
      clientId: 'approvals-page',
      roleMap: { approvers: ['operator'] },
    });
    center = createApprovalCenter({
      basePath: '/approvals',
      publicUrl: `${base}/`,
      oidc: { provider: oidc, sessions, limiters },
    });
    server = createServer(center);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await center?.close();
    await provider?.close();
  });

  it('sends the provider a callback under the public URL and the mount path, and opens a sign-in there', async () => {
    const browser = cookieJar();
    const begin = await fetch(`${base}/approvals/auth/oidc/login`, { redirect: 'manual' });
    expect(begin.status).toBe(302);
    const [state] = begin.headers.getSetCookie();
    expect(state).toMatch(
      /^approval_center_oidc_state=[^;]+; HttpOnly; SameSite=Lax; Path=\/approvals\/auth\/oidc;/,
    );
    browser.keep(begin);
    const authorize = new URL(begin.headers.get('location') ?? '');
    expect(authorize.searchParams.get('redirect_uri')).toBe(callback);

    provider.logInAs('bob');
    const back = await follow(authorize.toString(), callback);
    const done = await fetch(back, { redirect: 'manual', headers: { cookie: browser.header() } });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/approvals/');
    const cookies = done.headers.getSetCookie();
    expect(cookies.some((c) => /^approval_center_oidc_state=;.*Max-Age=0/.test(c))).toBe(true);
    const session = cookies.find((c) => c.startsWith('approval_center_session='));
    expect(session).toMatch(/; Path=\/approvals\/;/);

    const id = /^approval_center_session=([^;]+)/.exec(session ?? '')?.[1] ?? '';
    const signIn = await sessions.byId(id);
    expect(signIn).toMatchObject({ name: 'bob', access: 'operator', signedInWith: 'oidc' });
  });

  it('answers a callback this browser did not begin with a page that says why, and limits them', async () => {
    const begin = await fetch(`${base}/approvals/auth/oidc/login`, { redirect: 'manual' });
    provider.logInAs('bob');
    const back = await follow(begin.headers.get('location') ?? '', callback);
    const refused = await fetch(back, { redirect: 'manual' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await refused.text();
    expect(page).toContain(
      'this sign-in was not begun in this browser: open /approvals/auth/oidc/login again',
    );
    expect(page).toContain('href="/approvals/auth/oidc/login"');
    expect(
      refused.headers.getSetCookie().some((c) => c.startsWith('approval_center_session=')),
    ).toBe(false);

    // The first test's sign-in counted nothing; this failure is the second within the window.
    const second = await fetch(back, { redirect: 'manual' });
    expect(second.status).toBe(401);
    const again = await fetch(back, { redirect: 'manual' });
    expect(again.status).toBe(429);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
