import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { type ClientMetadata, type KoaContextWithOIDC } from 'oidc-provider';

// A real OpenID provider (panva's oidc-provider) on 127.0.0.1, for the tests of sign-in: users
// log in through a one-step interaction (or, for a browser, its login and consent pages),
// machines through client credentials.

/** A user of the provider, or a machine client: their name, groups and other claims. */
export interface Member {
  name: string;
  groups: string[];
  /** More claims: `email`, `realm_access` (each behind the scope of its name). */
  claims?: { email?: string; realm_access?: { roles: string[] } };
}

const SCOPES = 'openid profile groups email realm_access';

/** A running provider and what a test drives it with. */
export interface TestProvider {
  issuer: string;
  /** The provider's signing key (private), for tokens a test makes itself. */
  signingKey: JWK;
  /** Who the next login at the interaction is. */
  logInAs(name: string): void;
  /** An access token (a JWT) for `resource`, issued to machine client `clientId`. */
  machineToken(clientId: string, resource: string): Promise<string>;
  close(): Promise<void>;
}

/** Machine clients' secret: one for all, as only the test knows it. */
const MACHINE_SECRET = 'machine-secret-of-the-test';

/**
 * Starts a provider with the page's client `pageClient` (public, PKCE; its redirect URI
 * given), users `users` and machine clients `machines` (client credentials, JWT access
 * tokens for any resource), each carrying `preferred_username` and `groups`.
 */
export async function startProvider(options: {
  pageClient?: ClientMetadata;
  users?: Member[];
  machines?: Member[];
  /** False: the ID token carries the claims the scopes ask for (default: userinfo only). */
  conformIdTokenClaims?: boolean;
  /** True: a login page asks who signs in, then a consent page asks to allow the page's scopes. */
  pages?: boolean;
}): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = {
    ...(await exportJWK(privateKey)),
    kid: 'provider-key',
    alg: 'RS256',
    use: 'sig',
  };
  const members = new Map(
    [...(options.users ?? []), ...(options.machines ?? [])].map((m) => [m.name, m]),
  );
  const machines = (options.machines ?? []).map(
    (m): ClientMetadata => ({
      client_id: m.name,
      client_secret: MACHINE_SECRET,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
    }),
  );
  let next = '';

  const provider = new Provider(issuer, {
    clients: [...(options.pageClient ? [options.pageClient] : []), ...machines],
    jwks: { keys: [signingKey] },
    cookies: { keys: ['cookie-key-of-the-test'] },
    claims: {
      openid: ['sub'],
      profile: ['preferred_username'],
      groups: ['groups'],
      email: ['email'],
      realm_access: ['realm_access'],
    },
    scopes: SCOPES.split(' '),
    conformIdTokenClaims: options.conformIdTokenClaims ?? true,
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({
        sub,
        preferred_username: sub,
        groups: members.get(sub)?.groups ?? [],
        ...members.get(sub)?.claims,
      }),
    }),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        getResourceServerInfo: async (_ctx, resource) => ({
          scope: 'answer',
          audience: resource,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 300,
        }),
      },
    },
    // A machine's access token names it and its groups, as a user's ID token would.
    extraTokenClaims: async (_ctx, token) => {
      const member = members.get(String(token.clientId));
      return token.kind === 'ClientCredentials' && member
        ? { preferred_username: member.name, groups: member.groups, ...member.claims }
        : undefined;
    },
    // Without pages, consent is implied: the test's users have granted the page what it asks.
    ...(options.pages
      ? {}
      : {
          loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
            const grant = new ctx.oidc.provider.Grant({
              clientId: ctx.oidc.client?.clientId ?? '',
              accountId: ctx.oidc.session?.accountId ?? '',
            });
            grant.addOIDCScope(SCOPES);
            await grant.save();
            return grant;
          },
        }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  });
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      // The one-step login: whoever the test named, no form.
      if (!options.pages)
        void provider.interactionFinished(req, res, { login: { accountId: next } });
      else void interact(provider, req, res).catch(() => res.writeHead(500).end());
      return;
    }
    callback(req, res);
  });

  return {
    issuer,
    signingKey,
    logInAs: (name) => {
      next = name;
    },
    async machineToken(clientId, resource) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${MACHINE_SECRET}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: 'answer' }),
      });
      const body = (await response.json()) as { access_token?: string };
      if (!response.ok || !body.access_token) {
        throw new Error(`the provider issued no token: ${JSON.stringify(body)}`);
      }
      return body.access_token;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The provider's pages: GET shows the login form (a name) or the consent form (the scopes
 * asked), POST takes it and goes on with the sign-in.
 */
async function interact(provider: Provider, req: IncomingMessage, res: ServerResponse) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params } = details;
  if (req.method === 'GET') {
    const form =
      prompt.name === 'login'
        ? '<h1>Sign in</h1><label>Name <input id="login-name" name="name" required></label><button id="login-submit">Sign in</button>'
        : `<h1>Allow ${params.client_id}?</h1><p id="consent-scopes">${params.scope}</p><button id="consent-allow">Allow</button>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>Test provider</title><form method="post">${form}</form>`);
    return;
  }
  let body = '';
  for await (const chunk of req) body += chunk;
  if (prompt.name === 'login') {
    const accountId = new URLSearchParams(body).get('name') ?? '';
    await provider.interactionFinished(req, res, { login: { accountId } });
    return;
  }
  const grant = details.grantId
    ? ((await provider.Grant.find(details.grantId)) as InstanceType<typeof provider.Grant>)
    : new provider.Grant({
        accountId: details.session?.accountId ?? '',
        clientId: String(params.client_id),
      });
  const missing = prompt.details.missingOIDCScope as string[] | undefined;
  if (missing) grant.addOIDCScope(missing.join(' '));
  const missingClaims = prompt.details.missingOIDCClaims as string[] | undefined;
  if (missingClaims) grant.addOIDCClaims(missingClaims);
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { consent: details.grantId ? {} : { grantId } },
    { mergeWithLastSubmission: true },
  );
}

/** The cookies a browser would keep across the sign-in's redirects. */
export function cookieJar() {
  const cookies = new Map<string, string>();
  return {
    header: () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
    keep(response: Response) {
      for (const line of response.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const eq = pair.indexOf('=');
        const [name, value] = [pair.slice(0, eq), pair.slice(eq + 1)];
        if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) cookies.delete(name);
        else cookies.set(name, value);
      }
    },
  };
}

/**
 * Follows redirects from `url` as a browser would, until one leads to `stop` (a URL prefix):
 * returns that location, not fetched.
 */
export async function follow(url: string, stop: string, jar = cookieJar()): Promise<string> {
  let at = url;
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(at, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.keep(response);
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) {
      throw new Error(`${at} answered ${response.status}: ${await response.text()}`);
    }
    at = new URL(location, at).toString();
    if (at.startsWith(stop)) return at;
  }
  throw new Error(`too many redirects from ${url}`);
}
