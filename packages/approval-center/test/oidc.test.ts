import { cookieJar, follow, startProvider, type TestProvider } from '@internal/pg-test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalCenterError, Oidc, type OidcOptions } from '../src/index.js';

// Oidc against a real OpenID provider (oidc-provider on 127.0.0.1): discovery, bearer JWTs,
// and the page's code flow with PKCE, state and nonce, each through the public API.

const API = 'https://approvals.test/api';
/** Where the provider sends the browser back; nothing listens there: the test reads the URL. */
const CALLBACK = 'http://127.0.0.1:9/auth/oidc/callback';
const roleMap = { approvers: ['operator'], finance: ['finance'], admins: ['admin'] };

/** The refusal `promise` ends in: its code and words. */
async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!ApprovalCenterError.is(error)) throw new Error(`expected an ApprovalCenterError: ${error}`);
  return { code: error.code, status: error.status, reason: error.reason };
}

describe('Oidc with a real OpenID provider', { timeout: 30_000 }, () => {
  let provider: TestProvider;
  let oidc: Oidc;
  const options = (more: Partial<OidcOptions> = {}): OidcOptions => ({
    issuer: provider.issuer,
    clientId: 'approvals-page',
    audience: API,
    roleMap,
    redirectUri: CALLBACK,
    ...more,
  });

  beforeAll(async () => {
    provider = await startProvider({
      pageClient: {
        client_id: 'approvals-page',
        token_endpoint_auth_method: 'none',
        redirect_uris: [CALLBACK],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
      users: [
        { name: 'bob', groups: ['approvers', 'finance', 'unknown'] },
        { name: 'nemo', groups: ['unknown'] },
      ],
      machines: [{ name: 'fin', groups: ['approvers', 'finance'] }],
    });
    oidc = await Oidc.discover(options());
  });
  afterAll(async () => {
    await provider?.close();
  });

  /** The callback URL the provider sends `user`'s browser back to, after a begun sign-in. */
  const signInAs = async (user: string, on = oidc) => {
    provider.logInAs(user);
    const { url } = await on.beginSignIn(CALLBACK);
    return new URL(await follow(url, CALLBACK, cookieJar()));
  };

  it('refuses an issuer that is not the one the discovery document names, saying the right one', async () => {
    const wrong = await refusal(Oidc.discover(options({ issuer: `${provider.issuer}/` })));
    expect(wrong).toMatchObject({ code: 'invalid_argument', status: 400 });
    expect(wrong.reason).toContain(`exactly as the provider names it: "${provider.issuer}"`);
    const named = await refusal(
      Oidc.discover(
        options({ issuer: `${provider.issuer}/`, settingNames: { issuer: 'OUR_ISSUER' } }),
      ),
    );
    expect(named.reason).toMatch(/^OUR_ISSUER must be the issuer/);
  });

  it('says unavailable when the provider does not answer', async () => {
    const down = await startProvider({});
    const issuer = down.issuer;
    await down.close();
    const gone = await refusal(Oidc.discover(options({ issuer })));
    expect(gone).toMatchObject({ code: 'unavailable', status: 503 });
    expect(gone.reason).toContain('/.well-known/openid-configuration cannot be read');
  });

  it('takes a bearer JWT for its audience, mapping the groups to roles', async () => {
    const who = await oidc.verifyBearer(await provider.machineToken('fin', API));
    expect(who).toEqual({ name: 'fin', access: 'operator', roles: ['operator', 'finance'] });
    const elsewhere = await refusal(
      oidc.verifyBearer(await provider.machineToken('fin', 'https://elsewhere.test/')),
    );
    expect(elsewhere).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(elsewhere.reason).toBe('the bearer token is for another audience');
    expect((await refusal(oidc.verifyBearer('a.b.c'))).reason).toBe(
      'the bearer token is not a JWT',
    );
  });

  it('signs a user in with the code flow, PKCE S256, state and nonce', async () => {
    const { url, state } = await oidc.beginSignIn(CALLBACK);
    const asked = Object.fromEntries(new URL(url).searchParams);
    expect(asked).toMatchObject({
      response_type: 'code',
      client_id: 'approvals-page',
      redirect_uri: CALLBACK,
      scope: 'openid profile groups',
      code_challenge_method: 'S256',
      state,
      nonce: expect.any(String),
      code_challenge: expect.any(String),
    });
    const back = await signInAs('bob');
    expect(await oidc.finishSignIn(back.searchParams)).toEqual({
      name: 'bob',
      access: 'operator',
      roles: ['operator', 'finance'],
    });
    // One callback per sign-in: a replay finds no state.
    const replayed = await refusal(oidc.finishSignIn(back.searchParams));
    expect(replayed.reason).toContain('unknown, expired or finished already');
  });

  it('refuses a callback without its iss, of another issuer, with the provider error, or a bad code', async () => {
    const cases: Array<[(params: URLSearchParams) => void, string]> = [
      [(p) => p.delete('iss'), 'without the issuer (iss)'],
      [(p) => p.set('iss', 'https://other.test'), 'from another issuer than issuer'],
      [(p) => p.set('error', 'access_denied'), 'refused the sign-in (access_denied)'],
      [(p) => p.set('code', 'not-a-code'), "did not take the sign-in's code (invalid_grant)"],
    ];
    for (const [change, why] of cases) {
      const back = await signInAs('bob');
      change(back.searchParams);
      const refused = await refusal(oidc.finishSignIn(back.searchParams));
      expect(refused.code, why).toBe('unauthorized');
      expect(refused.reason).toContain(why);
    }
  });

  it('refuses (forbidden) a user none of whose groups maps to a role, naming the map', async () => {
    const named = await Oidc.discover(options({ settingNames: { roleMap: 'OUR_ROLE_MAP' } }));
    const refused = await refusal(named.finishSignIn((await signInAs('nemo', named)).searchParams));
    expect(refused).toMatchObject({ code: 'forbidden', status: 403 });
    expect(refused.reason).toBe(
      'nemo signed in, but no value of their "groups" claim is a role of this server (OUR_ROLE_MAP)',
    );
  });

  it('will not begin a page sign-in without a client', async () => {
    const apiOnly = await Oidc.discover(options({ clientId: undefined }));
    const refused = await refusal(apiOnly.beginSignIn(CALLBACK));
    expect(refused).toMatchObject({ code: 'not_found', status: 404 });
  });
});
