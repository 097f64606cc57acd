import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ApprovalCenterError,
  cookieOf,
  type Oidc,
  type OidcIdentity,
  type PageSignIns,
  recordFailedSignIn,
  refuseWhileLimited,
  SIGN_IN_TTL_MS,
  type SignInContext,
  type SignInLimiters,
  sourceOf,
} from '@x/approval-center';
import { baseHeaders } from '@x/approval-center/http';
import { appendAuditEvent } from '@x/askuser';
import { withoutOrigin } from '@x/executive';
import { toHttpError } from './http-error.js';

/** Ties a begun sign-in to the browser that began it, so nobody can sign a victim in as themselves. */
const STATE_COOKIE = 'runner_oidc_state';

/** Where the provider sends the browser back: the configured callback, else this Host's under the mount path. */
function redirectUriOf(oidc: Oidc, req: IncomingMessage, mountPath: string): string {
  return oidc.options.redirectUri ?? `http://${req.headers.host}${mountPath}/auth/oidc/callback`;
}

/** What the sign-in routes need: the provider, the audit log, the page's sessions, the limiters. */
interface OidcRouteContext {
  oidc: Oidc;
  audit?: SignInContext['audit'];
  sessions: PageSignIns;
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
  mountPath = '',
): Promise<boolean> {
  if (req.method !== 'GET') return false;
  const { oidc, sessions } = context;
  // Lax, not Strict: the provider's redirect back is a cross-site navigation.
  const stateCookie = (value: string, maxAge: number) =>
    `${STATE_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=${mountPath}/auth/oidc; Max-Age=${maxAge}${sessions.secure ? '; Secure' : ''}`;
  if (url.pathname === '/auth/oidc/login') {
    const { url: to, state } = await oidc.beginSignIn(redirectUriOf(oidc, req, mountPath));
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
    sendSignInFailed(res, toHttpError(caught).error, mountPath);
    return true;
  }
  await signedIn(context.audit, identity, sessions, res, mountPath);
  return true;
}

/**
 * The identity a callback signs in, or the refusal: rate-limited per source before anything
 * is checked; a 401 or 403 (a state of another browser, unknown or used, the provider's
 * error, a bad code, a token that fails verification, roles that map to none) is counted and
 * recorded. A provider that does not answer (503) is neither: it is not the browser's doing.
 */
async function finishCallback(
  { oidc, audit, limiters }: OidcRouteContext,
  req: IncomingMessage,
  url: URL,
): Promise<OidcIdentity> {
  const source = sourceOf(req);
  refuseWhileLimited(limiters, source);
  try {
    if (cookieOf(req, STATE_COOKIE) !== url.searchParams.get('state')) {
      throw new ApprovalCenterError(
        'unauthorized',
        'this sign-in was not begun in this browser: open /auth/oidc/login again',
      );
    }
    return await oidc.finishSignIn(url.searchParams);
  } catch (caught) {
    const { error } = toHttpError(caught);
    if (error.status === 401 || error.status === 403) {
      const why = error.reason;
      await recordFailedSignIn({ limiters, audit }, { source, why, signedInWith: 'oidc' });
    }
    throw error;
  }
}

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
 * one), a page session opened, then the browser goes to the page.
 */
async function signedIn(
  audit: SignInContext['audit'],
  identity: OidcIdentity,
  sessions: PageSignIns,
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
