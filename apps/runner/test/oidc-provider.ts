import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { type ClientMetadata } from 'oidc-provider';

// A real OpenID provider (panva's oidc-provider) on 127.0.0.1, for the tests of serve's
// sign-in: users log in through a one-step interaction, machines through client credentials.

/** A user of the provider, or a machine client: their name and groups. */
export interface Member {
  name: string;
  groups: string[];
}

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
    claims: { openid: ['sub'], profile: ['preferred_username'], groups: ['groups'] },
    scopes: ['openid', 'profile', 'groups'],
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({
        sub,
        preferred_username: sub,
        groups: members.get(sub)?.groups ?? [],
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
        ? { preferred_username: member.name, groups: member.groups }
        : undefined;
    },
    // Consent is implied: the test's users have granted the page what it asks.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client?.clientId ?? '',
        accountId: ctx.oidc.session?.accountId ?? '',
      });
      grant.addOIDCScope('openid profile groups');
      await grant.save();
      return grant;
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  });
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      // The one-step login: whoever the test named, no form.
      void provider.interactionFinished(req, res, { login: { accountId: next } });
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
