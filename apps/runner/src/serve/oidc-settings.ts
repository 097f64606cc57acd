import { type Env, setting, VARIABLES } from '../config/index.js';
import { usageError } from '../errors.js';

/** The identity provider's users sign in to `serve`: how, from the RUNNER_OIDC_* variables. */
export interface OidcSettings {
  /** The issuer URL, exactly as the provider's discovery document names it. */
  issuer: string;
  /** The `aud` a bearer JWT must name (default: the client id). */
  audience: string | undefined;
  /** The page's client (authorization code with PKCE); none: no sign-in from the page. */
  clientId: string | undefined;
  /** The page's client secret; none: a public client. */
  clientSecret: string | undefined;
  /**
   * Where the provider sends the browser back: RUNNER_OIDC_REDIRECT_URI, else the public URL's
   * `/auth/oidc/callback`; none: from the request's Host.
   */
  redirectUri: string | undefined;
  /** The claim (or dotted path) holding roles or groups. */
  rolesClaim: string;
  /** Claim value -> the runner's roles; none: each value is the role of its name. */
  roleMap: Readonly<Record<string, string[]>> | undefined;
  /** The claim naming who answered, falling back to `sub`. */
  nameClaim: string;
}

/**
 * The OpenID Connect settings of `env`, or undefined when RUNNER_OIDC_ISSUER is unset.
 * `publicUrl` is the address people open the page at (--public-url, else RUNNER_PUBLIC_URL).
 * @throws a usage error (exit 2) for a bad value, or settings that need the issuer or a client.
 */
export function oidcSettings(
  env: Env = process.env,
  publicUrl: string | undefined = setting(VARIABLES.RUNNER_PUBLIC_URL, env),
): OidcSettings | undefined {
  const issuer = setting(VARIABLES.RUNNER_OIDC_ISSUER, env);
  const clientId = setting(VARIABLES.RUNNER_OIDC_CLIENT_ID, env);
  const settings = {
    audience: setting(VARIABLES.RUNNER_OIDC_AUDIENCE, env) ?? clientId,
    clientId,
    clientSecret: setting(VARIABLES.RUNNER_OIDC_CLIENT_SECRET, env),
    redirectUri:
      setting(VARIABLES.RUNNER_OIDC_REDIRECT_URI, env) ??
      publicUrl?.replace(/\/*$/, '/auth/oidc/callback'),
    rolesClaim: setting(VARIABLES.RUNNER_OIDC_ROLES_CLAIM, env),
    roleMap: setting(VARIABLES.RUNNER_OIDC_ROLE_MAP, env),
    nameClaim: setting(VARIABLES.RUNNER_OIDC_NAME_CLAIM, env),
  };
  if (issuer === undefined) {
    const orphan = Object.keys(env).find((name) => name.startsWith('RUNNER_OIDC_') && env[name]);
    if (orphan) throw usageError(`${orphan} needs RUNNER_OIDC_ISSUER, the provider's URL`);
    return undefined;
  }
  if (settings.audience === undefined) {
    throw usageError(
      'RUNNER_OIDC_ISSUER needs RUNNER_OIDC_CLIENT_ID (the page signs in) or RUNNER_OIDC_AUDIENCE (the API takes bearer JWTs), or both',
    );
  }
  return { issuer, ...settings };
}
