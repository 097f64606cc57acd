import { freePort, startProvider, type TestProvider } from '@internal/pg-test';
import type { ClientMetadata } from 'oidc-provider';
import { type Served, serve } from './serve-harness.js';

// `runner serve` signing its page in with a real OpenID provider (@internal/pg-test's).

/** A provider and `runner serve` signing the page in with it, as {@link serveWithProvider} starts them. */
export interface ProvidedServe {
  provider: TestProvider;
  server: Served;
  /** The page client's redirect URI, at the server. */
  callbackUrl: string;
  close(): Promise<void>;
}

/**
 * Starts a provider whose page client (`runner-page`: public with PKCE unless `pageClient`
 * says otherwise) calls back to a port chosen first, then `runner serve --no-wake` on that
 * port with RUNNER_OIDC_ISSUER and RUNNER_OIDC_CLIENT_ID set, and `args` and `env` besides.
 */
export async function serveWithProvider(options: {
  provider: Omit<Parameters<typeof startProvider>[0], 'pageClient'> & {
    pageClient?: Partial<ClientMetadata>;
  };
  args: string[];
  env?: Record<string, string>;
}): Promise<ProvidedServe> {
  const port = await freePort();
  const callbackUrl = `http://127.0.0.1:${port}/auth/oidc/callback`;
  const provider = await startProvider({
    ...options.provider,
    pageClient: {
      client_id: 'runner-page',
      token_endpoint_auth_method: 'none',
      redirect_uris: [callbackUrl],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      ...options.provider.pageClient,
    },
  });
  try {
    const server = await serve(['--no-wake', '--port', String(port), ...options.args], {
      RUNNER_OIDC_ISSUER: provider.issuer,
      RUNNER_OIDC_CLIENT_ID: 'runner-page',
      ...options.env,
    });
    return {
      provider,
      server,
      callbackUrl,
      async close() {
        await server.stop();
        await provider.close();
      },
    };
  } catch (error) {
    await provider.close();
    throw error;
  }
}
