import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { appendAuditEvent } from '@x/askuser';
import { withoutOrigin } from '@x/executive';
import { createRemoteJWKSet, decodeJwt, errors, type JWTPayload, jwtVerify } from 'jose';
import { forbiddenError, RunnerError, usageError } from '../errors.js';
import type { Storage } from '../storage/index.js';
import { ACCESS_ROLES, type AccessRole } from '../storage/operators.js';
import { baseHeaders } from './http.js';
import { HttpError, toHttpError } from './http-error.js';
import type { OidcSettings } from './oidc-settings.js';
import {
  recordFailedSignIn,
  refuseWhileLimited,
  type SignInLimiters,
  sourceOf,
} from './rate-limit.js';
import { cookieOf, openSession, type SessionOptions } from './sessions.js';

/** Ties a begun sign-in to the browser that began it, so nobody can sign a victim in as themselves. */
const STATE_COOKIE = 'runner_oidc_state';

/** Who signed in through the identity provider, as the runner's roles say. */
export interface OidcIdentity {
  name: string;
  access: AccessRole;
  /** The access role first, then the audience roles, as an operator's. */
  roles: string[];
}

/** How long a begun sign-in may take to come back, and how many may wait at once. */
const SIGN_IN_TTL_MS = 10 * 60_000;
const MAX_PENDING_SIGN_INS = 1_000;
/** Clocks of the provider and of this machine may differ by this much. */
const CLOCK_TOLERANCE_S = 30;
const ROLE = /^[a-z][a-z0-9_-]{0,49}$/;

/** What the provider's discovery document says, of what the runner uses. */
interface Discovery {
  issuer: string;
  jwks_uri: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  userinfo_endpoint?: string;
  scopes_supported?: string[];
}

/** A sign-in begun by {@link Oidc.beginSignIn}, kept until its callback (or expiry). */
interface PendingSignIn {
  verifier: string;
  nonce: string;
  redirectUri: string;
  expiresAt: number;
}

const unauthorized = (why: string) => new HttpError(401, 'unauthorized', why);
const random = () => randomBytes(32).toString('base64url');

/** True when `token` has the shape of a JWT: three base64url parts. */
export function looksLikeJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
}

/** The value at a dotted `path` of `claims` (`realm_access.roles`). */
function claimAt(claims: Record<string, unknown>, path: string): unknown {
  let value: unknown = claims;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * The OpenID provider of RUNNER_OIDC_ISSUER, found through its discovery document: verifies
 * bearer JWTs against its JWKS, and signs the page in with the authorization-code flow and
 * PKCE.
 */
export class Oidc {
  private readonly jwks: ReturnType<typeof createRemoteJWKSet>;
  private readonly pending = new Map<string, PendingSignIn>();

  private constructor(
    readonly settings: OidcSettings,
    private readonly discovery: Discovery,
  ) {
    this.jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));
  }

  /**
   * Reads the issuer's `/.well-known/openid-configuration`.
   * @throws an `unavailable` error when it does not answer; a usage error when it names
   * another issuer.
   */
  static async discover(settings: OidcSettings): Promise<Oidc> {
    const where = `${settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    let discovery: Discovery;
    try {
      const response = await fetch(where, { signal: AbortSignal.timeout(10_000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      discovery = (await response.json()) as Discovery;
    } catch (error) {
      throw new RunnerError(
        'unavailable',
        `RUNNER_OIDC_ISSUER: the provider's discovery document ${where} cannot be read (${(error as Error).message})`,
        { cause: error },
      );
    }
    if (discovery.issuer !== settings.issuer || typeof discovery.jwks_uri !== 'string') {
      throw usageError(
        `RUNNER_OIDC_ISSUER must be the issuer exactly as the provider names it: "${discovery.issuer}"`,
      );
    }
    return new Oidc(settings, discovery);
  }

  /**
   * Who presented the bearer JWT `token`: its signature (the provider's JWKS), issuer,
   * audience (RUNNER_OIDC_AUDIENCE) and expiry checked, its roles mapped.
   * @throws {HttpError} 401 naming what is wrong, never repeating the token; 403 when no
   * role of the token maps to one of this server's.
   */
  async verifyBearer(token: string): Promise<OidcIdentity> {
    const claims = await this.verify(token, this.settings.audience ?? '', 'bearer token');
    return this.identityOf(claims);
  }

  /**
   * Begins the page's sign-in: the provider's authorization URL (code, PKCE S256, state and
   * nonce), remembered here by its state for ten minutes, for one callback.
   * @throws {HttpError} 404 when there is no client for the page (RUNNER_OIDC_CLIENT_ID).
   */
  beginSignIn(redirectUri: string): { url: string; state: string } {
    const { clientId } = this.settings;
    const endpoint = this.discovery.authorization_endpoint;
    if (clientId === undefined || endpoint === undefined) {
      throw new HttpError(
        404,
        'not_found',
        'this server signs the page in with its identity provider only with RUNNER_OIDC_CLIENT_ID set',
      );
    }
    this.forgetExpired();
    // The oldest begun sign-in makes way: the login route needs no key, so it must not grow memory.
    if (this.pending.size >= MAX_PENDING_SIGN_INS) {
      this.pending.delete(this.pending.keys().next().value as string);
    }
    const state = random();
    const pending = { verifier: random(), nonce: random(), redirectUri };
    this.pending.set(state, { ...pending, expiresAt: Date.now() + SIGN_IN_TTL_MS });
    const url = new URL(endpoint);
    const challenge = createHash('sha256').update(pending.verifier).digest('base64url');
    for (const [name, value] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: this.scope(),
      state,
      nonce: pending.nonce,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })) {
      url.searchParams.set(name, value);
    }
    return { url: url.toString(), state };
  }

  /**
   * Finishes a sign-in at its callback: checks the state (known, not expired, not used
   * before), exchanges the code with the PKCE verifier, verifies the ID token (signature,
   * issuer, audience: the client, expiry, nonce) and maps its roles.
   * @throws {HttpError} 401 naming what is wrong; 403 when no role maps; 503 when the
   * provider does not answer.
   */
  async finishSignIn(params: URLSearchParams): Promise<OidcIdentity> {
    const state = params.get('state') ?? '';
    const pending = this.pending.get(state);
    this.pending.delete(state);
    if (!pending || pending.expiresAt < Date.now()) {
      throw unauthorized(
        'this sign-in is unknown, expired or finished already: start again at /auth/oidc/login',
      );
    }
    const refused = params.get('error');
    if (refused !== null) {
      const code = /^[\w.-]{1,64}$/.test(refused) ? ` (${refused})` : '';
      throw unauthorized(`the identity provider refused the sign-in${code}`);
    }
    const iss = params.get('iss');
    if (iss !== null && iss !== this.settings.issuer) {
      throw unauthorized('the sign-in came back from another issuer than RUNNER_OIDC_ISSUER');
    }
    const code = params.get('code');
    if (!code) throw unauthorized('the sign-in came back without a code');
    const tokens = await this.exchange(code, pending);
    const clientId = this.settings.clientId ?? '';
    const claims = await this.verify(tokens.id_token, clientId, 'ID token');
    if (claims.nonce !== pending.nonce) throw unauthorized('the ID token is not of this sign-in');
    // A token for several audiences must name this client as the party it was issued to.
    if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== clientId) {
      throw unauthorized('the ID token was issued to another client (azp)');
    }
    return this.identityOf(await this.withUserInfo(claims, tokens.access_token));
  }

  /**
   * The scopes the page asks for: openid, profile, and those named as the roles and the name
   * claims (`groups`, `email`) where the provider lists them.
   */
  private scope(): string {
    const { rolesClaim, nameClaim } = this.settings;
    const named = [rolesClaim, nameClaim].map((claim) => claim.split('.')[0] ?? '');
    const extra = named.filter((scope) => this.discovery.scopes_supported?.includes(scope));
    return [...new Set(['openid', 'profile', ...extra])].join(' ');
  }

  private forgetExpired(): void {
    const now = Date.now();
    for (const [state, pending] of this.pending) {
      if (pending.expiresAt < now) this.pending.delete(state);
    }
  }

  /** Verifies a JWT of the issuer for `audience`; refusals say why in words. */
  private async verify(token: string, audience: string, what: string): Promise<JWTPayload> {
    let issuer: unknown;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      throw unauthorized(`the ${what} is not a JWT`);
    }
    // Said before the signature is checked: another issuer's keys are not in this JWKS.
    if (issuer !== this.settings.issuer) {
      throw unauthorized(
        `the ${what} is of an unknown issuer: this server takes RUNNER_OIDC_ISSUER's`,
      );
    }
    try {
      const { payload } = await jwtVerify(token, this.jwks, {
        issuer: this.settings.issuer,
        audience,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp', 'sub'],
      });
      return payload;
    } catch (error) {
      throw this.refusal(error, what);
    }
  }

  private refusal(error: unknown, what: string): HttpError {
    if (error instanceof errors.JWTExpired) return unauthorized(`the ${what} has expired`);
    if (error instanceof errors.JWTClaimValidationFailed) {
      const wrong =
        error.claim === 'aud' ? 'is for another audience' : `has a bad "${error.claim}"`;
      return unauthorized(`the ${what} ${wrong}`);
    }
    if (
      error instanceof errors.JWSSignatureVerificationFailed ||
      error instanceof errors.JWKSNoMatchingKey ||
      error instanceof errors.JOSEAlgNotAllowed
    ) {
      return unauthorized(`the ${what}'s signature is not the provider's (a bad signature)`);
    }
    if (error instanceof errors.JWKSTimeout || error instanceof TypeError) {
      return new HttpError(503, 'unavailable', "the identity provider's keys cannot be read now");
    }
    return unauthorized(`the ${what} cannot be verified (${(error as Error).message})`);
  }

  /** Trades the code (and the PKCE verifier) for the tokens at the token endpoint. */
  private async exchange(
    code: string,
    pending: PendingSignIn,
  ): Promise<{ id_token: string; access_token?: string }> {
    const { clientId = '', clientSecret } = this.settings;
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: pending.redirectUri,
      code_verifier: pending.verifier,
    });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (clientSecret === undefined) body.set('client_id', clientId);
    else {
      const pair = `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`;
      headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
    }
    let response: Response;
    try {
      response = await fetch(this.discovery.token_endpoint ?? '', {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(10_000),
      });
    } catch {
      throw new HttpError(
        503,
        'unavailable',
        "the identity provider's token endpoint did not answer",
      );
    }
    const tokens = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok || typeof tokens.id_token !== 'string') {
      const error = typeof tokens.error === 'string' ? ` (${tokens.error.slice(0, 64)})` : '';
      throw unauthorized(`the identity provider did not take the sign-in's code${error}`);
    }
    return tokens as { id_token: string; access_token?: string };
  }

  /**
   * The ID token's claims, completed by the userinfo endpoint when they lack the name or the
   * roles (providers that keep profile claims out of the ID token); the ID token's win.
   */
  private async withUserInfo(claims: JWTPayload, accessToken: string | undefined) {
    const { nameClaim, rolesClaim } = this.settings;
    const complete =
      claimAt(claims, nameClaim) !== undefined && claimAt(claims, rolesClaim) !== undefined;
    const endpoint = this.discovery.userinfo_endpoint;
    if (complete || !endpoint || !accessToken) return claims;
    const response = await fetch(endpoint, {
      headers: { authorization: `Bearer ${accessToken}` },
      signal: AbortSignal.timeout(10_000),
    }).catch(() => undefined);
    const info = response?.ok ? ((await response.json()) as Record<string, unknown>) : {};
    return info.sub === claims.sub ? { ...info, ...claims } : claims;
  }

  /**
   * The runner's identity of verified `claims`: the name claim (else `sub`), and the roles
   * the role map gives the roles claim's values; the highest access role wins, `operator`
   * when only audience roles are given.
   * @throws a `forbidden` error (403) when no value maps to a role.
   */
  private identityOf(claims: Record<string, unknown>): OidcIdentity {
    const { nameClaim, rolesClaim, roleMap } = this.settings;
    const named = claimAt(claims, nameClaim);
    const name = typeof named === 'string' && named !== '' ? named : String(claims.sub);
    if (!/^[^\p{Cc}]{1,200}$/u.test(name)) {
      throw unauthorized(
        `the token's ${nameClaim} is not a name of up to 200 printable characters`,
      );
    }
    const given = claimAt(claims, rolesClaim);
    const values = (Array.isArray(given) ? given : [given]).filter(
      (value): value is string => typeof value === 'string',
    );
    const mapped = values.flatMap((value) =>
      roleMap ? (roleMap[value] ?? []) : ROLE.test(value) ? [value] : [],
    );
    if (mapped.length === 0) {
      throw forbiddenError(
        `${name} signed in, but no value of their "${rolesClaim}" claim is a role of this server (RUNNER_OIDC_ROLE_MAP)`,
      );
    }
    const access = ACCESS_ROLES.find((role) => mapped.includes(role)) ?? 'operator';
    const audience = mapped.filter((role) => !(ACCESS_ROLES as readonly string[]).includes(role));
    return { name, access, roles: [access, ...new Set(audience)] };
  }
}

/** Where the provider sends the browser back: RUNNER_OIDC_REDIRECT_URI, else this Host's callback. */
function redirectUriOf(oidc: Oidc, req: IncomingMessage): string {
  return oidc.settings.redirectUri ?? `http://${req.headers.host}/auth/oidc/callback`;
}

/** What the sign-in routes need: the provider, the storage, the page's sessions, the limiters. */
export interface OidcRouteContext {
  oidc: Oidc;
  storage: Storage;
  sessions: SessionOptions;
  limiters: SignInLimiters;
}

/**
 * Answers the sign-in routes, `GET /auth/oidc/login` (to the provider) and
 * `GET /auth/oidc/callback` (back from it); false for any other request. A callback that
 * fails is counted against its source address (as a wrong key is), recorded in the audit log
 * as `sign-in-failed`, and answered with a page that says why.
 */
export async function answerOidcRoute(
  context: OidcRouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  if (req.method !== 'GET') return false;
  const { oidc, sessions } = context;
  // Lax, not Strict: the provider's redirect back is a cross-site navigation.
  const stateCookie = (value: string, maxAge: number) =>
    `${STATE_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/auth/oidc; Max-Age=${maxAge}${sessions.secure ? '; Secure' : ''}`;
  if (url.pathname === '/auth/oidc/login') {
    const { url: to, state } = oidc.beginSignIn(redirectUriOf(oidc, req));
    res.writeHead(302, {
      location: to,
      'cache-control': 'no-store',
      'set-cookie': stateCookie(state, SIGN_IN_TTL_MS / 1000),
    });
    res.end();
    return true;
  }
  if (url.pathname !== '/auth/oidc/callback') return false;
  res.setHeader('set-cookie', stateCookie('', 0));
  let identity: OidcIdentity;
  try {
    identity = await finishCallback(context, req, url);
  } catch (caught) {
    sendSignInFailed(res, toHttpError(caught).error);
    return true;
  }
  await signedIn(context.storage, identity, sessions, res);
  return true;
}

/**
 * The identity a callback signs in, or the refusal: rate-limited per source before anything
 * is checked; a 401 or 403 (a state of another browser, unknown or used, the provider's
 * error, a bad code, a token that fails verification, roles that map to none) is counted and
 * recorded. A provider that does not answer (503) is neither: it is not the browser's doing.
 */
async function finishCallback(
  { oidc, storage, limiters }: OidcRouteContext,
  req: IncomingMessage,
  url: URL,
): Promise<OidcIdentity> {
  const source = sourceOf(req);
  refuseWhileLimited(limiters, source);
  try {
    if (cookieOf(req, STATE_COOKIE) !== url.searchParams.get('state')) {
      throw unauthorized('this sign-in was not begun in this browser: open /auth/oidc/login again');
    }
    return await oidc.finishSignIn(url.searchParams);
  } catch (caught) {
    const { error } = toHttpError(caught);
    if (error.status === 401 || error.status === 403) {
      const why = error.message;
      await recordFailedSignIn(storage, limiters, { source, why, signedInWith: 'oidc' });
    }
    throw error;
  }
}

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page a browser lands on when its sign-in failed: the refusal in words (escaped), and the
 * ways on. The callback is a navigation, so a JSON error would be all the person sees.
 */
function sendSignInFailed(res: ServerResponse, error: HttpError): void {
  const retryAfter = error.details?.retryAfter;
  if (typeof retryAfter === 'number') res.setHeader('retry-after', String(retryAfter));
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in failed · runner</title>
<link rel="stylesheet" href="/style.css"></head>
<body><main class="sign-in"><h1>Sign-in failed</h1>
<p id="sign-in-error" class="error" role="alert">${escapeHtml(withoutOrigin(error.message))}</p>
<p><a href="/auth/oidc/login">Try again</a> · <a href="/">Back to the approval center</a></p>
</main></body></html>
`;
  res.writeHead(error.status, {
    ...baseHeaders,
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'content-security-policy':
      "default-src 'none'; style-src 'self'; form-action 'none'; frame-ancestors 'none'",
  });
  res.end(body);
}

/**
 * What a verified sign-in from the page leads to: recorded in the audit log (when there is
 * one), a page session opened, then the browser goes to the page.
 */
export async function signedIn(
  storage: Storage,
  identity: OidcIdentity,
  sessions: SessionOptions,
  res: ServerResponse,
): Promise<void> {
  const key = storage.auditKey();
  if (key !== undefined) {
    const { name, roles } = identity;
    await appendAuditEvent(
      storage.db,
      { event: 'signed-in', name, roles, signedInWith: 'oidc' },
      { key },
    );
  }
  await openSession(storage, res, { ...identity, signedInWith: 'oidc' }, sessions);
  res.writeHead(303, { location: '/', 'cache-control': 'no-store' });
  res.end();
}
