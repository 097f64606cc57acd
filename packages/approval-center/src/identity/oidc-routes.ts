import type { IncomingMessage, ServerResponse } from 'node:http';
import { appendAuditEvent } from '@x/askuser';
import { withoutOrigin } from '@x/executive';
import { ApprovalCenterError } from '../errors.js';
import { answerOf, baseHeaders, type ErrorClassifier } from '../http/send.js';
import { type Oidc, SIGN_IN_TTL_MS } from './oidc.js';
import type { OidcIdentity } from './oidc-claims.js';
import {
  FailureLimiter,
  recordFailedSignIn,
  refuseWhileLimited,
  type SignInAudit,
  type SignInLimiters,
  sourceOf,
} from './rate-limit.js';
import { cookieOf, type PageSignIns } from './sign-ins.js';

/** Options of the center's OpenID Connect sign-in routes (`createApprovalCenter({ oidc })`). */
export interface OidcRoutesOptions {
  /** The provider, `await Oidc.discover(...)` with the page's `clientId`. */
  provider: Oidc;
  /**
   * The page's sign-ins the callback opens, their cookie scoped to the center's path; your
   * `authenticate` (or routes) find them again with `sessions.idOf(req, mountPath)` and `byId`.
   */
  sessions: PageSignIns;
  /**
   * Failed callbacks counted per source address (429 past the limit); default 20 in 15
   * minutes, in this process's memory.
   */
  limiters?: SignInLimiters | undefined;
  /** Where `signed-in` and `sign-in-failed` entries are appended; none: no audit log. */
  audit?: SignInAudit | undefined;
  /** The cookie that ties a begun sign-in to its browser; default `approval_center_oidc_state`. */
  stateCookieName?: string | undefined;
}

/** What one request of the routes needs beyond the options. */
interface OidcRequest {
  mountPath: string;
  /** Where people open the app (the center's path is added), else this request's Host. */
  publicUrl: string | undefined;
  classifyError: ErrorClassifier | undefined;
}

/** The routes of a provider, with the limiters it counts failures in. */
export interface OidcRoutes {
  options: OidcRoutesOptions;
  limiters: SignInLimiters;
  stateCookie: string;
}

/** The routes' state of `options`: their own limiters when the host gives none. */
export function oidcRoutes(options: OidcRoutesOptions): OidcRoutes {
  const limit = { max: 20, windowMs: 15 * 60_000 };
  return {
    options,
    limiters: options.limiters ?? {
      source: new FailureLimiter(limit),
      name: new FailureLimiter(limit),
    },
    stateCookie: options.stateCookieName ?? 'approval_center_oidc_state',
  };
}

/** Where the provider sends the browser back: the provider's option, else under the app's address. */
function redirectUriOf(oidc: Oidc, req: IncomingMessage, request: OidcRequest): string {
  const origin = request.publicUrl?.replace(/\/+$/, '') ?? `http://${req.headers.host}`;
  return oidc.options.redirectUri ?? `${origin}${request.mountPath}/auth/oidc/callback`;
}

/**
 * Answers the sign-in routes, `GET /auth/oidc/login` (to the provider) and
 * `GET /auth/oidc/callback` (back from it); false for any other request. A callback that
 * fails is counted against its source address (as a wrong key is), recorded in the audit log
 * as `sign-in-failed`, and answered with a page that says why.
 */
export async function answerOidcRoute(
  routes: OidcRoutes,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  request: OidcRequest,
): Promise<boolean> {
  if (req.method !== 'GET') return false;
  const { provider, sessions } = routes.options;
  const { mountPath } = request;
  // Lax, not Strict: the provider's redirect back is a cross-site navigation.
  const stateCookie = (value: string, maxAge: number) =>
    `${routes.stateCookie}=${value}; HttpOnly; SameSite=Lax; Path=${mountPath}/auth/oidc; Max-Age=${maxAge}${sessions.secure ? '; Secure' : ''}`;
  if (url.pathname === '/auth/oidc/login') {
    const { url: to, state } = await provider.beginSignIn(redirectUriOf(provider, req, request));
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
    identity = await finishCallback(routes, req, url, request);
  } catch (caught) {
    sendSignInFailed(res, answerOf(caught, request.classifyError).error, mountPath);
    return true;
  }
  await signedIn(routes.options, identity, res, mountPath);
  return true;
}

/**
 * The identity a callback signs in, or the refusal: rate-limited per source before anything
 * is checked; a 401 or 403 (a state of another browser, unknown or used, the provider's
 * error, a bad code, a token that fails verification, roles that map to none) is counted and
 * recorded. A provider that does not answer (503) is neither: it is not the browser's doing.
 */
async function finishCallback(
  routes: OidcRoutes,
  req: IncomingMessage,
  url: URL,
  request: OidcRequest,
): Promise<OidcIdentity> {
  const { limiters } = routes;
  const source = sourceOf(req);
  refuseWhileLimited(limiters, source);
  try {
    if (cookieOf(req, routes.stateCookie) !== url.searchParams.get('state')) {
      throw new ApprovalCenterError(
        'unauthorized',
        `this sign-in was not begun in this browser: open ${request.mountPath}/auth/oidc/login again`,
      );
    }
    return await routes.options.provider.finishSignIn(url.searchParams);
  } catch (caught) {
    const { error } = answerOf(caught, request.classifyError);
    if (error.status === 401 || error.status === 403) {
      const failure = { source, why: error.reason, signedInWith: 'oidc' as const };
      await recordFailedSignIn({ limiters, audit: routes.options.audit }, failure);
    }
    throw error;
  }
}

// Apostrophes are left as they are: the page puts text in elements and double-quoted attributes only.
const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page a browser lands on when its sign-in failed: the refusal in words (escaped), and the
 * ways on. The callback is a navigation, so a JSON error would be all the person sees.
 */
function sendSignInFailed(
  res: ServerResponse,
  error: ApprovalCenterError,
  mountPath: string,
): void {
  const retryAfter = error.retryAfter;
  if (typeof retryAfter === 'number') res.setHeader('retry-after', String(retryAfter));
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in failed · runner</title>
<link rel="stylesheet" href="${mountPath}/style.css"></head>
<body><main class="sign-in"><h1>Sign-in failed</h1>
<p id="sign-in-error" class="error" role="alert">${escapeHtml(withoutOrigin(error.reason))}</p>
<p><a href="${mountPath}/auth/oidc/login">Try again</a> · <a href="${mountPath}/">Back to the approval center</a></p>
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
 * one), a page sign-in opened, then the browser goes to the page.
 */
async function signedIn(
  { audit, sessions }: OidcRoutesOptions,
  identity: OidcIdentity,
  res: ServerResponse,
  mountPath: string,
): Promise<void> {
  const key = audit?.auditKey();
  if (audit && key !== undefined) {
    const { name, roles } = identity;
    await appendAuditEvent(
      audit.db,
      { event: 'signed-in', name, roles, signedInWith: 'oidc' },
      { key },
    );
  }
  await sessions.open(res, { ...identity, signedInWith: 'oidc' }, mountPath);
  res.writeHead(303, { location: `${mountPath}/`, 'cache-control': 'no-store' });
  res.end();
}
