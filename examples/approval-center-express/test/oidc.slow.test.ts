import type { Server } from 'node:http';
import {
  cookieJar,
  follow,
  freePort,
  openPgliteTarget,
  type SqlTarget,
  startProvider,
  type TestProvider,
} from '@internal/pg-test';
import { Oidc } from '@x/approval-center';
import { migrate, sqlExecutiveStorage } from '@x/executive';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { anthropicModel } from '../src/agent.js';
import { type App, createApp } from '../src/app.js';

// The approval center under /approvals signs its page in through a real OpenID provider
// (oidc-provider, on 127.0.0.1): the provider is sent a callback under the prefix, the
// callback there opens a sign-in whose cookie is scoped to the prefix, and that sign-in
// reaches the center's API as the provider's user.

let provider: TestProvider;
let opened: SqlTarget;
let app: App;
let server: Server;
let base: string;
let callback: string;

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
  opened = await openPgliteTarget();
  await migrate(opened.db);
  const storage = sqlExecutiveStorage(opened.db, { queue: { synchronousClaim: true } });
  // No run starts here: the model is never called.
  app = createApp({ storage, model: anthropicModel('unused'), oidc: { oidc, publicUrl: base } });
  server = app.app.listen(port, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await app?.close();
  await opened?.close();
  await provider?.close();
});

it('sends the provider a callback under /approvals, and signs the page in there, its cookie scoped to /approvals/', async () => {
  const browser = cookieJar();
  // Not signed in: the app's page offers the provider; the center's API refuses.
  const page = await fetch(`${base}/approvals/`, { redirect: 'manual' });
  expect(page.status).toBe(303);
  expect(page.headers.get('location')).toBe('/login?next=%2Fapprovals%2F');
  const login = await (await fetch(`${base}/login`)).text();
  expect(login).toContain('href="/approvals/auth/oidc/login"');

  const begin = await fetch(`${base}/approvals/auth/oidc/login`, { redirect: 'manual' });
  expect(begin.status).toBe(302);
  const [stateCookie] = begin.headers.getSetCookie();
  expect(stateCookie).toContain('; Path=/approvals/auth/oidc;');
  browser.keep(begin);
  const authorize = new URL(begin.headers.get('location') ?? '');
  expect(authorize.origin).toBe(provider.issuer);
  expect(authorize.searchParams.get('redirect_uri')).toBe(callback);

  // The provider signs bob in and sends the browser back under the prefix.
  provider.logInAs('bob');
  const back = await follow(authorize.toString(), callback);
  const done = await fetch(back, { redirect: 'manual', headers: { cookie: browser.header() } });
  expect(done.status).toBe(303);
  expect(done.headers.get('location')).toBe('/approvals/');
  const session = done.headers.getSetCookie().find((c) => c.startsWith('approval_center_session='));
  expect(session).toMatch(/; Path=\/approvals\/;/);
  expect(session).toMatch(/HttpOnly/);
  expect(session).toMatch(/SameSite=Strict/);
  browser.keep(done);

  // Signed in: the page is served, and the API knows bob as the provider says.
  const cookie = { cookie: browser.header() };
  expect((await fetch(`${base}/approvals/`, { headers: cookie, redirect: 'manual' })).status).toBe(
    200,
  );
  const who = await (await fetch(`${base}/approvals/api/session`, { headers: cookie })).json();
  expect(who).toMatchObject({ signedIn: true, name: 'bob', access: 'operator' });
  expect((await fetch(`${base}/approvals/api/pauses`, { headers: cookie })).status).toBe(200);
});

it('refuses a callback this browser did not begin', async () => {
  const begin = await fetch(`${base}/approvals/auth/oidc/login`, { redirect: 'manual' });
  provider.logInAs('bob');
  const back = await follow(begin.headers.get('location') ?? '', callback);
  // Without the state cookie of the browser that began it.
  const done = await fetch(back, { redirect: 'manual' });
  expect(done.status).toBe(401);
  expect(done.headers.getSetCookie().some((c) => c.startsWith('approval_center_session='))).toBe(
    false,
  );
});
