import type { IncomingMessage, ServerResponse } from 'node:http';
import { type SessionResponse, type SignOutResponse, signInBodySchema } from '../contract/index.js';
import { ApprovalCenterError } from '../errors.js';
import { readJson } from '../http/body.js';
import { checkWrite } from '../http/checks.js';
import { sendJson } from '../http/send.js';
import {
  type Caller,
  callerFrom,
  callerOf,
  needsSignIn,
  type SignInContext,
  type SignInRequest,
  signedOutRefusals,
  signInWith,
} from './callers.js';
import { checkCsrf } from './sign-ins.js';

/** The page's sign-in methods: a key, and the identity provider when the page may use it; none when not needed. */
async function methodsOf(signIn: SignInContext): Promise<SessionResponse['methods']> {
  if (!(await needsSignIn(signIn))) return [];
  return signIn.oidc?.clientId ? ['key', 'oidc'] : ['key'];
}

function sessionResponse(caller: Caller, methods: SessionResponse['methods']): SessionResponse {
  return {
    signedIn: true,
    name: caller.name,
    access: caller.access,
    signedInWith: caller.signedInWith,
    csrfToken: caller.session?.csrfToken ?? caller.csrfToken ?? null,
    expiresAt: caller.session?.expiresAt.toISOString() ?? null,
    methods,
  };
}

/**
 * `GET /api/session` of a center that signs nobody in itself: who the app's `authenticate`
 * says `caller` is (with the CSRF token it gave), or signed out.
 */
export function sendAppSession(res: ServerResponse, caller: Caller | undefined): void {
  const none = { name: null, access: null, signedInWith: null, csrfToken: null, expiresAt: null };
  sendJson(
    res,
    200,
    caller ? sessionResponse(caller, []) : { signedIn: false, ...none, methods: [] },
  );
}

/**
 * Serves the sign-in routes, which a request reaches before it is signed in:
 * `GET /api/session` (who is signed in, and the page's CSRF token), `POST /api/sign-in`
 * (a key in, a session cookie out) and `POST /api/sign-out` (the session ends).
 * @returns false for any other path.
 */
export async function handleSignIn(
  signIn: SignInContext,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  request?: SignInRequest,
): Promise<boolean> {
  const method = { '/api/session': 'GET', '/api/sign-in': 'POST', '/api/sign-out': 'POST' }[
    pathname
  ];
  if (method === undefined) return false;
  if (req.method !== method) {
    res.setHeader('allow', method);
    throw new ApprovalCenterError(
      'method_not_allowed',
      `${req.method} is not allowed here; use ${method}`,
    );
  }
  const methods = await methodsOf(signIn);
  if (pathname === '/api/session') {
    const caller = await callerOf(signIn, req, request).catch((error) => {
      if (signedOutRefusals.has(error)) return undefined;
      throw error;
    });
    const none = { name: null, access: null, signedInWith: null, csrfToken: null, expiresAt: null };
    sendJson(
      res,
      200,
      caller ? sessionResponse(caller, methods) : { signedIn: false, ...none, methods },
    );
    return true;
  }
  checkWrite(req);
  if (pathname === '/api/sign-in') {
    const parsed = signInBodySchema.safeParse(await readJson(req));
    if (!parsed.success) {
      throw new ApprovalCenterError(
        'invalid_request',
        'the body is {"key": "..."} (and optionally "name")',
      );
    }
    if (methods.length === 0) {
      throw new ApprovalCenterError(
        'invalid_request',
        'this server needs no sign-in: it answers as the local operator on this machine',
      );
    }
    const who = await signInWith(signIn, req, parsed.data.key, parsed.data.name);
    const session = await signIn.sessions.open(res, who, request?.mountPath);
    sendJson(res, 200, sessionResponse({ ...callerFrom(who, 'page'), session }, methods));
    return true;
  }
  const caller = await callerOf(signIn, req, request);
  if (!caller.session) {
    throw new ApprovalCenterError(
      'invalid_request',
      'only a page session signs out: an API key stops working when `runner operators revoke` or `rotate` replaces it',
    );
  }
  checkCsrf(req, caller.session);
  await signIn.sessions.end(res, caller.session, request?.mountPath);
  signIn.signedOut?.();
  sendJson(res, 200, { signedOut: true } satisfies SignOutResponse);
  return true;
}
