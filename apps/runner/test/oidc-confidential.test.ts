import { cookieJar, follow, type TestProvider } from '@internal/pg-test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProvidedServe, serveWithProvider } from './oidc-provider.js';
import { call, dataDirs, type Served } from './serve-harness.js';

// The page's sign-in as a confidential client (its secret sent with HTTP Basic), with the
// roles in a nested claim (realm_access.roles), no role map, and the name from `email`; the
// provider puts those claims in the ID token itself.

const dataDir = dataDirs();
const SECRET = 'the-page-client-secret-of-the-test';

describe('runner serve: the page signs in as a confidential client', { timeout: 60_000 }, () => {
  let provided: ProvidedServe | undefined;
  let provider: TestProvider;
  let server: Served | undefined;
  let callbackUrl = '';

  beforeAll(async () => {
    provided = await serveWithProvider({
      provider: {
        pageClient: { client_secret: SECRET, token_endpoint_auth_method: 'client_secret_basic' },
        conformIdTokenClaims: false,
        users: [
          {
            name: 'u-4711',
            groups: [],
            claims: {
              email: 'ada@team.example',
              realm_access: { roles: ['admin', 'Travel Desk'] },
            },
          },
        ],
        machines: [{ name: 'ci', groups: [], claims: { realm_access: { roles: ['admin'] } } }],
      },
      args: ['--data', dataDir()],
      env: {
        RUNNER_OIDC_CLIENT_SECRET: SECRET,
        RUNNER_OIDC_AUDIENCE: 'https://runner.test/api',
        RUNNER_OIDC_ROLES_CLAIM: 'realm_access.roles',
        RUNNER_OIDC_NAME_CLAIM: 'email',
      },
    });
    ({ provider, server, callbackUrl } = provided);
  }, 60_000);
  afterAll(async () => {
    await provided?.close();
  });

  it('signs in with the secret, reading the name and the nested roles as they are', async () => {
    const login = await fetch(new URL('/auth/oidc/login', server?.url), { redirect: 'manual' });
    const scope = new URL(login.headers.get('location') ?? '').searchParams.get('scope');
    expect(scope).toBe('openid profile realm_access email');

    provider.logInAs('u-4711');
    const jar = cookieJar();
    const back = await follow(
      new URL('/auth/oidc/login', server?.url).toString(),
      callbackUrl,
      jar,
    );
    const done = await fetch(back, { redirect: 'manual', headers: { cookie: jar.header() } });
    expect(done.status, await done.clone().text()).toBe(303);

    // Without a map, a value that is a role name is that role; "Travel Desk" is none.
    const admin = await provider.machineToken('ci', 'https://runner.test/api');
    const log = await call(new URL('/api/audit', server?.url).toString(), {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(log.status).toBe(200);
    const signedIn = (log.body.entries as Array<{ data: Record<string, unknown> }>).filter(
      (e) => e.data.event === 'signed-in',
    );
    expect(signedIn.map((e) => e.data)).toEqual([
      { event: 'signed-in', name: 'ada@team.example', roles: ['admin'], signedInWith: 'oidc' },
    ]);
  });
});
