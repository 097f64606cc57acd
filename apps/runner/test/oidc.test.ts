import { cookieJar, follow, startProvider, type TestProvider } from '@internal/pg-test';
import { generateKeyPair, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProvidedServe, serveWithProvider } from './oidc-provider.js';
import { call, dataDirs, exec, json, run, type Served } from './serve-harness.js';

// `runner serve` signs in the users of a real OpenID provider (oidc-provider, started here):
// bearer JWTs on the API, and the page's authorization-code flow with PKCE.

const dataDir = dataDirs();
const API = 'https://runner.test/api';
const ROLE_MAP = 'ops-admins=admin,approvers=operator,finance=finance,readers=viewer';
/** Failed callbacks from one address before the next is refused unchecked. */
const SIGN_IN_FAILURES = 6;

describe('runner serve with an OpenID provider (embedded default, no wake)', {
  timeout: 60_000,
}, () => {
  let provided: ProvidedServe | undefined;
  let provider: TestProvider;
  let other: TestProvider;
  let server: Served | undefined;
  let callbackUrl = '';
  const data = dataDir();
  let question = '';
  let open = '';

  beforeAll(async () => {
    const policy = { RUNNER_AUDIENCE: 'ask_user=finance' };
    question = await exec('oidc-trip', { data, env: policy });
    open = await exec('oidc-open', { data });
    provided = await serveWithProvider({
      provider: {
        users: [
          { name: 'ada', groups: ['ops-admins'] },
          { name: 'bob', groups: ['approvers', 'finance', 'unmapped'] },
          { name: 'nemo', groups: ['unmapped'] },
        ],
        machines: [
          { name: 'ci-admin', groups: ['ops-admins'] },
          { name: 'cy', groups: ['approvers'] },
          { name: 'fin', groups: ['approvers', 'finance'] },
          { name: 'vic', groups: ['readers', 'finance'] },
          { name: 'nobody', groups: ['unmapped'] },
        ],
      },
      args: ['--data', data],
      env: {
        ...policy,
        RUNNER_OIDC_AUDIENCE: API,
        RUNNER_OIDC_ROLE_MAP: ROLE_MAP,
        RUNNER_SIGN_IN_FAILURES: String(SIGN_IN_FAILURES),
      },
    });
    ({ provider, server, callbackUrl } = provided);
    // Another issuer: its tokens are well formed and signed, by keys this server does not trust.
    other = await startProvider({ machines: [{ name: 'fin', groups: ['approvers', 'finance'] }] });
  }, 60_000);
  afterAll(async () => {
    await provided?.close();
    await other?.close();
  });

  const api = (path: string) => new URL(path, server?.url).toString();
  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
  const answer = (token: string) =>
    call(
      api(`/api/pauses/${question}/answer`),
      json({ action: 'accept', content: 'Kyoto' }, { authorization: `Bearer ${token}` }),
    );
  const auditOf = async () => {
    const admin = await provider.machineToken('ci-admin', API);
    const log = await call(api('/api/audit'), bearer(admin));
    expect(log.status).toBe(200);
    return log.body.entries as Array<{ kind: string; data: Record<string, unknown> }>;
  };

  it('needs a key or a JWT: the local operator is gone once an identity provider is set', async () => {
    const anonymous = await call(api('/api/pauses'));
    expect(anonymous.status).toBe(401);
  });

  it('takes the bearer JWTs the provider issues for its audience, with roles from the groups', async () => {
    const fin = await call(api('/api/pauses'), bearer(await provider.machineToken('fin', API)));
    expect(fin.status).toBe(200);
    const listed = (body: { pauses: Array<{ token: string; canAnswer: boolean }> }) =>
      body.pauses.map((p) => [p.token, p.canAnswer]);
    expect(listed(fin.body)).toEqual([
      [question, true],
      [open, true],
    ]);
    // An operator outside the finance audience sees its question read-only, and with a short
    // page the question they may answer comes first, though asked later.
    const cyToken = bearer(await provider.machineToken('cy', API));
    const cy = await call(api('/api/pauses'), cyToken);
    expect(cy.status).toBe(200);
    expect(listed(cy.body)).toEqual([
      [question, false],
      [open, true],
    ]);
    expect(listed((await call(api('/api/pauses?limit=1'), cyToken)).body)).toEqual([[open, true]]);
  });

  it('refuses an expired token, another audience, another issuer and a bad signature, saying which', async () => {
    const key = await importJWK(provider.signingKey, 'RS256');
    const signed = (claims: { iss?: string; aud?: string; exp?: number }, with_ = key) =>
      new SignJWT({ preferred_username: 'fin', groups: ['approvers', 'finance'] })
        .setProtectedHeader({ alg: 'RS256', kid: 'provider-key' })
        .setSubject('fin')
        .setIssuer(claims.iss ?? provider.issuer)
        .setAudience(claims.aud ?? API)
        .setIssuedAt()
        .setExpirationTime(claims.exp ?? '5m')
        .sign(with_);
    const stranger = (await generateKeyPair('RS256')).privateKey;
    const hourAgo = Math.floor(Date.now() / 1000) - 3600;
    const refusals: Array<[string, string]> = [
      [await signed({ exp: hourAgo }), 'has expired'],
      [await provider.machineToken('fin', 'https://elsewhere.test/'), 'is for another audience'],
      [await other.machineToken('fin', API), 'unknown issuer'],
      [await signed({}, stranger), 'bad signature'],
    ];
    for (const [token, why] of refusals) {
      const refused = await call(api('/api/pauses'), bearer(token));
      expect(refused.status, why).toBe(401);
      expect(refused.body.error.code).toBe('unauthorized');
      expect(refused.body.error.message).toContain(why);
      expect(JSON.stringify(refused.body)).not.toContain(token.split('.')[1]);
    }
    // The same claims, signed by the provider's key and not expired, are taken.
    expect((await call(api('/api/pauses'), bearer(await signed({})))).status).toBe(200);
  });

  it('refuses (403) a token none of whose groups maps to a role', async () => {
    const nobody = await call(
      api('/api/pauses'),
      bearer(await provider.machineToken('nobody', API)),
    );
    expect(nobody.status).toBe(403);
    expect(nobody.body.error.code).toBe('forbidden');
    expect(nobody.body.error.message).toContain('RUNNER_OIDC_ROLE_MAP');
  });

  it("answers through the store's audience check: outside it forbidden, a viewer refused, finance answers", async () => {
    const outside = await answer(await provider.machineToken('cy', API));
    expect(outside.status).toBe(403);
    expect(outside.body.error.code).toBe('forbidden');
    const viewer = await answer(await provider.machineToken('vic', API));
    expect(viewer.status).toBe(403);
    expect(viewer.body.error.message).toContain('viewer');
    const fin = await answer(await provider.machineToken('fin', API));
    expect(fin.status, JSON.stringify(fin.body)).toBe(200);

    const answered = (await auditOf()).find((e) => e.kind === 'question-answered');
    expect(answered?.data).toMatchObject({ by: 'fin', signedInWith: 'oidc', channel: 'api' });
    const refused = (await auditOf()).filter((e) => e.kind === 'answer-refused');
    expect(refused.map((e) => e.data.reason)).toContain('forbidden');
  });

  it('signs the page in with the code flow and PKCE, mapping the groups to roles', async () => {
    const login = await fetch(api('/auth/oidc/login'), { redirect: 'manual' });
    expect(login.status).toBe(302);
    const to = new URL(login.headers.get('location') ?? '');
    expect(`${to.origin}`).toBe(provider.issuer);
    expect(Object.fromEntries(to.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'runner-page',
      redirect_uri: callbackUrl,
      scope: 'openid profile groups',
      code_challenge_method: 'S256',
      state: expect.any(String),
      nonce: expect.any(String),
      code_challenge: expect.any(String),
    });

    for (const [user, roles] of [
      ['ada', ['admin']],
      ['bob', ['operator', 'finance']],
    ] as const) {
      provider.logInAs(user);
      const jar = cookieJar();
      const back = await follow(api('/auth/oidc/login'), callbackUrl, jar);
      expect(new URL(back).searchParams.get('code')).toBeTruthy();
      const done = await fetch(back, { redirect: 'manual', headers: { cookie: jar.header() } });
      expect(done.status, await done.clone().text()).toBe(303);
      expect(done.headers.get('location')).toBe('/');
      // The callback opened a page session for that user.
      const session = done.headers.getSetCookie().find((c) => c.startsWith('runner_session='));
      expect(session).toContain('HttpOnly');
      const who = await call(api('/api/session'), {
        headers: { cookie: (session ?? '').split(';')[0] ?? '' },
      });
      expect(who.body).toMatchObject({ signedIn: true, name: user, signedInWith: 'oidc' });
      const signedIn = (await auditOf()).filter((e) => e.data.event === 'signed-in');
      expect(signedIn.at(-1)?.data).toMatchObject({ name: user, roles, signedInWith: 'oidc' });
    }
  });

  it('refuses a failed callback with a page saying why, records it, and rate-limits the address', async () => {
    // What the browser shows: the page's status and its message.
    const land = async (url: string, cookie = '') => {
      const response = await fetch(url, { redirect: 'manual', headers: { cookie } });
      expect(response.headers.get('content-type')).toContain('text/html');
      return { status: response.status, text: await response.text() };
    };
    provider.logInAs('bob');
    const jar = cookieJar();
    const back = await follow(api('/auth/oidc/login'), callbackUrl, jar);
    const cookie = jar.header();
    // Another browser (no state cookie) cannot finish it: nobody signs a victim in as themselves.
    const elsewhere = await land(back);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.text).toContain('Sign-in failed');
    expect(elsewhere.text).toContain('not begun in this browser');
    const forged = new URL(back);
    forged.searchParams.set('state', 'made-up-by-an-attacker');
    expect((await land(forged.toString(), cookie)).text).toContain('not begun in this browser');

    expect((await fetch(back, { redirect: 'manual', headers: { cookie } })).status).toBe(303);
    const replayed = await land(back, cookie);
    expect(replayed.status).toBe(401);
    expect(replayed.text).toContain('unknown, expired or finished');

    provider.logInAs('nemo');
    const nemoJar = cookieJar();
    const nemo = await land(
      await follow(api('/auth/oidc/login'), callbackUrl, nemoJar),
      nemoJar.header(),
    );
    expect(nemo.status).toBe(403);
    expect(nemo.text).toContain('nemo signed in, but no value');

    // A begun sign-in that the provider refused, and one whose code it does not take.
    const begun = async () => {
      const login = await fetch(api('/auth/oidc/login'), { redirect: 'manual' });
      const state = new URL(login.headers.get('location') ?? '').searchParams.get('state');
      const at = new URL(callbackUrl);
      at.searchParams.set('state', state ?? '');
      // As the provider sends it back (RFC 9207): openid-client refuses a callback without it.
      at.searchParams.set('iss', provider.issuer);
      return { at, cookie: `runner_oidc_state=${state}` };
    };
    const refusedThere = await begun();
    refusedThere.at.searchParams.set('error', 'access_denied');
    const denied = await land(refusedThere.at.toString(), refusedThere.cookie);
    expect(denied.text).toContain('the identity provider refused the sign-in (access_denied)');
    const badCode = await begun();
    badCode.at.searchParams.set('code', 'not-a-code-of-the-provider');
    const bad = await land(badCode.at.toString(), badCode.cookie);
    expect(bad.status).toBe(401);
    expect(bad.text).toContain("did not take the sign-in's code (invalid_grant)");

    // Six failures from this address: the next callback, even a good one, is refused unchecked.
    provider.logInAs('bob');
    const laterJar = cookieJar();
    const later = await follow(api('/auth/oidc/login'), callbackUrl, laterJar);
    const limited = await land(later, laterJar.header());
    expect(limited.status).toBe(429);
    expect(limited.text).toContain('too many failed sign-ins from this address');

    const failed = (await auditOf()).filter((e) => e.data.event === 'sign-in-failed');
    expect(failed).toHaveLength(SIGN_IN_FAILURES);
    expect(failed.map((e) => e.data.why)).toEqual([
      expect.stringContaining('not begun in this browser'),
      expect.stringContaining('not begun in this browser'),
      expect.stringContaining('unknown, expired or finished'),
      expect.stringContaining('nemo signed in, but no value'),
      expect.stringContaining('refused the sign-in (access_denied)'),
      expect.stringContaining('(invalid_grant)'),
    ]);
    expect(failed[0]?.data).toMatchObject({ source: '127.0.0.1', signedInWith: 'oidc' });
  });

  it('refuses to start on settings that do not fit, naming the variable (exit 2)', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ RUNNER_OIDC_CLIENT_ID: 'runner-page' }, 'RUNNER_OIDC_CLIENT_ID needs RUNNER_OIDC_ISSUER'],
      // The provider calls itself without the slash: discovery says so.
      [
        { RUNNER_OIDC_ISSUER: `${provider.issuer}/`, RUNNER_OIDC_CLIENT_ID: 'runner-page' },
        `RUNNER_OIDC_ISSUER must be the issuer exactly as the provider names it: "${provider.issuer}"`,
      ],
    ];
    for (const [env, said] of cases) {
      const refused = await run(['serve', '--port', '0', '--data', dataDir()], env);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(said);
    }
  });
});
