import { createRemoteJWKSet, decodeJwt, errors, type JWTPayload, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { ApprovalCenterError } from '../errors.js';
import { claimAt, identityOf, type OidcIdentity } from './oidc-claims.js';

/** The identity provider and the page's client at it. */
export interface OidcOptions {
  /** The issuer URL, exactly as the provider's discovery document names it. */
  issuer: string;
  /** The `aud` a bearer JWT must name (default: the client id). */
  audience?: string | undefined;
  /** The page's client (authorization code with PKCE); none: no sign-in from the page. */
  clientId?: string | undefined;
  /** The page's client secret, sent with HTTP Basic; none: a public client. */
  clientSecret?: string | undefined;
  /**
   * Where the provider sends the browser back (registered at the provider); none: the caller
   * names it to {@link Oidc.beginSignIn}.
   */
  redirectUri?: string | undefined;
  /** The claim (or dotted path, `realm_access.roles`) holding roles or groups (default `groups`). */
  rolesClaim?: string | undefined;
  /** Claim value -> roles; none: each value that is a role name is that role. */
  roleMap?: Readonly<Record<string, readonly string[]>> | undefined;
  /** The claim naming who signed in, falling back to `sub` (default `preferred_username`). */
  nameClaim?: string | undefined;
  /** Where a sign-in begins, named when one must start again (default `/auth/oidc/login`). */
  loginPath?: string | undefined;
  /**
   * How refusals name the settings (the variables or options that set them); default: these
   * options' own names.
   */
  settingNames?: Partial<Record<'issuer' | 'clientId' | 'roleMap', string>> | undefined;
}

/** A begun sign-in, kept until its callback (or expiry). */
interface PendingSignIn {
  verifier: string;
  nonce: string;
  redirectUri: string;
  expiresAt: number;
}

/** How long a begun sign-in may take to come back, and how many may wait at once. */
export const SIGN_IN_TTL_MS = 10 * 60_000;
const MAX_PENDING_SIGN_INS = 1_000;
/** Clocks of the provider and of this machine may differ by this much. */
const CLOCK_TOLERANCE_S = 30;
const TIMEOUT_S = 10;

const unauthorized = (why: string, cause?: unknown) =>
  new ApprovalCenterError('unauthorized', why, { cause });

/** True when `token` has the shape of a JWT: three base64url parts. */
export function looksLikeJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
}

/**
 * An OpenID provider, found through its discovery document (`openid-client`): verifies
 * bearer JWTs against its JWKS (`jose`), and signs the page in with the authorization-code
 * flow, PKCE (S256), state and nonce, verifying the ID token's signature, issuer, audience,
 * expiry and nonce.
 *
 * @example
 * const oidc = await Oidc.discover({ issuer: 'https://id.example.com', clientId: 'approvals' });
 * const { url, state } = oidc.beginSignIn('https://approvals.example.com/auth/oidc/callback');
 * // ...the browser comes back to the callback with `state` and a code:
 * const { name, roles } = await oidc.finishSignIn(callbackUrl.searchParams);
 */
export class Oidc {
  private readonly jwks: ReturnType<typeof createRemoteJWKSet>;
  private readonly pending = new Map<string, PendingSignIn>();
  private readonly names: Record<'issuer' | 'clientId' | 'roleMap', string>;

  private constructor(
    readonly options: OidcOptions,
    private readonly config: client.Configuration,
  ) {
    this.jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri ?? ''));
    this.names = {
      issuer: 'issuer',
      clientId: 'clientId',
      roleMap: 'roleMap',
      ...options.settingNames,
    };
  }

  /**
   * Reads the issuer's `/.well-known/openid-configuration`. An `http:` issuer is allowed (a
   * provider on this machine or a private network).
   * @throws {ApprovalCenterError} `unavailable` when it does not answer; `invalid_argument`
   * when it names another issuer, or neither a client nor an audience is given.
   */
  static async discover(options: OidcOptions): Promise<Oidc> {
    const names = { issuer: 'issuer', clientId: 'clientId', ...options.settingNames };
    if ((options.audience ?? options.clientId) === undefined) {
      throw new ApprovalCenterError(
        'invalid_argument',
        `the identity provider needs a client (the page signs in) or an audience (the API takes bearer JWTs), or both`,
      );
    }
    const where = `${options.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const { clientSecret } = options;
    // openid-client needs a client id; without the page's, none of its flows is ever run.
    const clientId = options.clientId ?? options.audience ?? '';
    const auth =
      clientSecret === undefined ? client.None() : client.ClientSecretBasic(clientSecret);
    let config: client.Configuration;
    try {
      config = await client.discovery(
        new URL(options.issuer),
        clientId,
        { [client.clockTolerance]: CLOCK_TOLERANCE_S },
        auth,
        {
          timeout: TIMEOUT_S,
          execute: [
            ...(new URL(options.issuer).protocol === 'http:' ? [client.allowInsecureRequests] : []),
            client.enableNonRepudiationChecks,
          ],
        },
      );
    } catch (error) {
      const named = (error as { cause?: { body?: { issuer?: unknown } } }).cause?.body?.issuer;
      if (typeof named === 'string') throw issuerMismatch(names.issuer, named, error);
      throw new ApprovalCenterError(
        'unavailable',
        `${names.issuer}: the provider's discovery document ${where} cannot be read (${(error as Error).message})`,
        { cause: error },
      );
    }
    const metadata = config.serverMetadata();
    // Compared exactly: openid-client takes `https://id/` for `https://id`, a token's `iss` does not.
    if (metadata.issuer !== options.issuer) throw issuerMismatch(names.issuer, metadata.issuer);
    if (typeof metadata.jwks_uri !== 'string') {
      throw new ApprovalCenterError(
        'invalid_argument',
        `${names.issuer}: the provider's discovery document names no jwks_uri`,
      );
    }
    return new Oidc(options, config);
  }

  /** The page's client id, when the page signs in with the provider. */
  get clientId(): string | undefined {
    return this.options.clientId;
  }

  /**
   * Who presented the bearer JWT `token`: its signature (the provider's JWKS), issuer,
   * audience and expiry checked, its roles mapped.
   * @throws {ApprovalCenterError} `unauthorized` naming what is wrong, never repeating the
   * token; `forbidden` when no role of the token maps to one of the approval center's;
   * `unavailable` when the provider's keys cannot be read.
   */
  async verifyBearer(token: string): Promise<OidcIdentity> {
    const audience = this.options.audience ?? this.options.clientId ?? '';
    const claims = await this.verify(token, audience, 'bearer token');
    return this.identityOf(claims);
  }

  /**
   * Begins the page's sign-in: the provider's authorization URL (code, PKCE S256, state and
   * nonce), remembered here by its state for ten minutes, for one callback.
   * @throws {ApprovalCenterError} `not_found` when there is no client for the page.
   */
  async beginSignIn(redirectUri: string): Promise<{ url: string; state: string }> {
    if (this.options.clientId === undefined) {
      throw new ApprovalCenterError(
        'not_found',
        `this server signs the page in with its identity provider only with ${this.names.clientId} set`,
      );
    }
    this.forgetExpired();
    // The oldest begun sign-in makes way: the login route needs no key, so it must not grow memory.
    if (this.pending.size >= MAX_PENDING_SIGN_INS) {
      this.pending.delete(this.pending.keys().next().value as string);
    }
    const state = client.randomState();
    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    this.pending.set(state, {
      verifier,
      nonce,
      redirectUri,
      expiresAt: Date.now() + SIGN_IN_TTL_MS,
    });
    const url = client.buildAuthorizationUrl(this.config, {
      redirect_uri: redirectUri,
      scope: this.scope(),
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return { url: url.toString(), state };
  }

  /**
   * Finishes a sign-in at its callback: checks the state (known, not expired, not used
   * before), exchanges the code with the PKCE verifier, verifies the ID token (signature,
   * issuer, audience: the client, expiry, nonce), completes its claims from the userinfo
   * endpoint when it lacks the name or the roles, and maps its roles.
   * @throws {ApprovalCenterError} `unauthorized` naming what is wrong; `forbidden` when no
   * role maps; `unavailable` when the provider does not answer.
   */
  async finishSignIn(params: URLSearchParams): Promise<OidcIdentity> {
    const state = params.get('state') ?? '';
    const pending = this.pending.get(state);
    this.pending.delete(state);
    if (!pending || pending.expiresAt < Date.now()) {
      throw unauthorized(
        `this sign-in is unknown, expired or finished already: start again at ${this.options.loginPath ?? '/auth/oidc/login'}`,
      );
    }
    // Said before openid-client's checks: a provider's error may come back without its `iss`.
    const refused = params.get('error');
    if (refused !== null) {
      const code = /^[\w.-]{1,64}$/.test(refused) ? ` (${refused})` : '';
      throw unauthorized(`the identity provider refused the sign-in${code}`);
    }
    const back = new URL(pending.redirectUri);
    for (const [name, value] of params) back.searchParams.append(name, value);
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(this.config, back, {
        pkceCodeVerifier: pending.verifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw this.callbackRefusal(error);
    }
    const claims = tokens.claims() as JWTPayload;
    return this.identityOf(await this.withUserInfo(claims, tokens.access_token));
  }

  /**
   * The scopes the page asks for: openid, profile, and those named as the roles and the name
   * claims (`groups`, `email`) where the provider lists them.
   */
  private scope(): string {
    const { rolesClaim = 'groups', nameClaim = 'preferred_username' } = this.options;
    const supported = this.config.serverMetadata().scopes_supported;
    const named = [rolesClaim, nameClaim].map((claim) => claim.split('.')[0] ?? '');
    const extra = named.filter((scope) => supported?.includes(scope));
    return [...new Set(['openid', 'profile', ...extra])].join(' ');
  }

  private forgetExpired(): void {
    const now = Date.now();
    for (const [state, pending] of this.pending) {
      if (pending.expiresAt < now) this.pending.delete(state);
    }
  }

  /** Why a callback is refused, in words, from openid-client's failure. */
  private callbackRefusal(error: unknown): ApprovalCenterError {
    if (error instanceof client.AuthorizationResponseError) {
      const code = /^[\w.-]{1,64}$/.test(error.error) ? ` (${error.error})` : '';
      return unauthorized(`the identity provider refused the sign-in${code}`, error);
    }
    if (error instanceof client.ResponseBodyError) {
      return unauthorized(
        `the identity provider did not take the sign-in's code (${error.error.slice(0, 64)})`,
        error,
      );
    }
    // openid-client's own error names the class of failure; its cause says which check failed.
    const cause = (error as { cause?: unknown }).cause;
    const message =
      cause instanceof Error ? cause.message : ((error as Error).message ?? String(error));
    if (error instanceof TypeError || /timed? ?out|abort/i.test(message)) {
      return new ApprovalCenterError(
        'unavailable',
        "the identity provider's token endpoint did not answer",
        { cause: error },
      );
    }
    if (/unexpected "iss" \(issuer\) response parameter/.test(message)) {
      return unauthorized(
        `the sign-in came back from another issuer than ${this.names.issuer}`,
        error,
      );
    }
    if (/response parameter "iss" \(issuer\) missing/.test(message)) {
      return unauthorized(
        'the sign-in came back without the issuer (iss) its provider sends',
        error,
      );
    }
    if (/nonce/.test(message)) return unauthorized('the ID token is not of this sign-in', error);
    return unauthorized(`the sign-in cannot be verified (${message})`, error);
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
    if (issuer !== this.options.issuer) {
      throw unauthorized(
        `the ${what} is of an unknown issuer: this server takes ${this.names.issuer}'s`,
      );
    }
    try {
      const { payload } = await jwtVerify(token, this.jwks, {
        issuer: this.options.issuer,
        audience,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp', 'sub'],
      });
      return payload;
    } catch (error) {
      throw jwtRefusal(error, what);
    }
  }

  /**
   * The ID token's claims, completed by the userinfo endpoint when they lack the name or the
   * roles (providers that keep profile claims out of the ID token); the ID token's win.
   */
  private async withUserInfo(claims: JWTPayload, accessToken: string | undefined) {
    const { nameClaim = 'preferred_username', rolesClaim = 'groups' } = this.options;
    const complete =
      claimAt(claims, nameClaim) !== undefined && claimAt(claims, rolesClaim) !== undefined;
    if (complete || !this.config.serverMetadata().userinfo_endpoint || !accessToken) return claims;
    // A userinfo endpoint that fails leaves the ID token's claims: the roles then decide.
    const info = await client
      .fetchUserInfo(this.config, accessToken, String(claims.sub))
      .catch(() => ({}));
    return { ...info, ...claims };
  }

  private identityOf(claims: Record<string, unknown>): OidcIdentity {
    return identityOf(claims, {
      nameClaim: this.options.nameClaim ?? 'preferred_username',
      rolesClaim: this.options.rolesClaim ?? 'groups',
      roleMap: this.options.roleMap,
      roleMapName: this.names.roleMap,
    });
  }
}

function issuerMismatch(name: string, named: string, cause?: unknown): ApprovalCenterError {
  return new ApprovalCenterError(
    'invalid_argument',
    `${name} must be the issuer exactly as the provider names it: "${named}"`,
    { cause },
  );
}

/** A bearer JWT's refusal in words: which check failed, never the token. */
function jwtRefusal(error: unknown, what: string): ApprovalCenterError {
  if (error instanceof errors.JWTExpired) return unauthorized(`the ${what} has expired`);
  if (error instanceof errors.JWTClaimValidationFailed) {
    const wrong = error.claim === 'aud' ? 'is for another audience' : `has a bad "${error.claim}"`;
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
    return new ApprovalCenterError(
      'unavailable',
      "the identity provider's keys cannot be read now",
      {
        cause: error,
      },
    );
  }
  return unauthorized(`the ${what} cannot be verified (${(error as Error).message})`);
}
