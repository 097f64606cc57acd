import type { OidcOptions } from '@x/approval-center';
import { type Env, setting, VARIABLES } from '../config/index.js';
import { usageError } from '../errors.js';

/**
 * The OpenID Connect options of `env` (the RUNNER_OIDC_* variables), or undefined when
 * RUNNER_OIDC_ISSUER is unset. `publicUrl` is the address people open the page at
 * (--public-url, else RUNNER_PUBLIC_URL): the callback is its `/auth/oidc/callback` unless
 * RUNNER_OIDC_REDIRECT_URI says otherwise.
 * @throws a usage error (exit 2) for a bad value, or settings that need the issuer or a client.
 */
export function oidcSettings(
  env: Env = process.env,
  publicUrl: string | undefined = setting(VARIABLES.RUNNER_PUBLIC_URL, env),
): OidcOptions | undefined {
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
    settingNames: {
      issuer: 'RUNNER_OIDC_ISSUER',
      clientId: 'RUNNER_OIDC_CLIENT_ID',
      roleMap: 'RUNNER_OIDC_ROLE_MAP',
    },
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
