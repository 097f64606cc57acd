import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AccessRole,
  ApprovalCenterError,
  type CenterRequest,
  type Credential,
  checkCsrf,
  looksLikeJwt,
  type Oidc,
  type PageSignIn,
  type PageSignInIdentity,
  type PageSignIns,
  type ReadOnlyReason,
  refuseWhileLimited,
  type SessionResponse,
  type SignInLimiters,
  type SignOutResponse,
  sameSecret,
  signInBodySchema,
  sourceOf,
} from '@x/approval-center';
import { checkWrite, readJson, sendJson } from '@x/approval-center/http';
import type { AnswerOptions, Identity, Pending } from '@x/askuser';
import { forbiddenError, usageError } from '../errors.js';
import { refuseAnswerer } from '../executive/index.js';
import type { Storage } from '../storage/index.js';
import { osUserName } from '../terminal/os-user.js';
import { fromLocalSocket } from './local-socket.js';
import { recordFailedSignIn } from './rate-limit.js';

/** Who sent a request, as the API acts on it. */
export interface Caller {
  /** The name recorded with an answer (`null`: not known). */
  name: string | null;
  access: AccessRole;
  /** An operator's identity, for the store's audience check; none for an admin. */
  identity?: Identity;
  /**
   * `key` (an operator's API key), `token` (the shared --token), `oidc` (an OpenID
   * provider), `local` (no key, loopback), `os-user` (over the data folder's
   * socket, as the CLI), `app` (the host app's own sign-in, through `authenticate`).
   */
  signedInWith: 'key' | 'token' | 'oidc' | 'local' | 'os-user' | 'app';
  /** `page` for the page's session (or, without sign-in, a request naming its origin), `cli` over the data folder's socket, else `api`. */
  channel: 'page' | 'api' | 'cli';
  /** The page's session that signed the request in, if a cookie did. */
  session?: PageSignIn;
  /**
   * What signed the request in, for an event stream to look up again while it stays open;
   * none for what lasts as long as the server (the shared token, the local operator, the
   * data folder's socket).
   */
  credential?: Credential;
}

/** How a server signs requests in: its shared token, the name of who answers through it, sessions. */
export interface SignIn {
  storage: Storage;
  token: string | undefined;
  operator: string | null;
  sessions: PageSignIns;
  /** Failed sign-ins counted per source address and per operator name. */
  limiters: SignInLimiters;
  /** The identity provider whose bearer JWTs sign in too (RUNNER_OIDC_ISSUER). */
  oidc?: Oidc | undefined;
  /** A session was signed out: open event streams look at their credentials again. */
  signedOut?: () => void;
}

/** The refusals of a missing or wrong key or session: `/api/session` answers them as signed out. */
const signedOutRefusals = new WeakSet<ApprovalCenterError>();

const unauthorized = (why: string) => {
  const error = new ApprovalCenterError(
    'unauthorized',
    `${why}: sign in on the page with your key, or send "Authorization: Bearer KEY" (a key from \`runner operators add\`, or the server's --token)`,
  );
  signedOutRefusals.add(error);
  return error;
};

/** The key of `Authorization: Bearer KEY`, if the request sends one. */
function bearerOf(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
}

/** True when requests need a key: a shared token was given, an identity provider set, or an operator is live. */
async function needsSignIn(signIn: SignIn): Promise<boolean> {
  return (
    Boolean(signIn.token) ||
    signIn.oidc !== undefined ||
    (await signIn.storage.operators().anyLive())
  );
}

/**
 * Who `key` signs in: the shared token's admin or a live operator (when `name` is given,
 * only that one).
 * @throws {ApprovalCenterError} 429 while the source address or the operator named has failed too often
 *   (nothing checked), 401 for a wrong key, recorded in the audit log as `sign-in-failed`.
 */
async function signInWith(
  signIn: SignIn,
  req: IncomingMessage,
  key: string,
  name?: string,
): Promise<PageSignInIdentity> {
  const { storage, limiters } = signIn;
  const source = sourceOf(req);
  const owner = name ?? (await storage.operators().ownerOf(key));
  refuseWhileLimited(limiters, source, owner);
  if (signIn.token && sameSecret(key, signIn.token)) {
    const tokenName = signIn.operator ?? 'admin';
    if (name === undefined || name === tokenName) {
      return { name: tokenName, access: 'admin', roles: ['admin'], signedInWith: 'token' };
    }
  }
  const operator = await storage.operators().authenticate(key);
  if (operator && (name === undefined || name === operator.name)) {
    const { roles, access, keyId } = operator;
    return { name: operator.name, access, roles: [...(roles ?? [])], signedInWith: 'key', keyId };
  }
  const why =
    owner === undefined
      ? "not the server's token nor any operator's key"
      : `not a live key of ${owner} (wrong, rotated or revoked)`;
  await recordFailedSignIn(storage, limiters, { source, name: owner, why, signedInWith: 'key' });
  // One answer for every dead key: the audit log keeps whose it was, the caller is told no more.
  throw unauthorized(
    "this key is not the server's token nor a live operator's key (wrong, rotated or revoked)",
  );
}

function callerFrom(
  who: Pick<PageSignInIdentity, 'name' | 'roles' | 'access'> & {
    signedInWith: Caller['signedInWith'];
  },
  channel: Caller['channel'],
): Caller {
  const { name, roles, access } = who;
  return {
    name,
    access,
    ...(access === 'admin' ? {} : { identity: { name, roles } }),
    signedInWith: who.signedInWith,
    channel,
  };
}

/**
 * Who sent `req`: the data folder's owner over its socket, a user of the identity provider
 * by a bearer JWT, a live operator or the shared token's admin by the Bearer key, the
 * `operator` the host app's own sign-in found, the one its page session signed in, or, when
 * the server needs no sign-in, the one local operator as an admin.
 * @throws {ApprovalCenterError} 401 for a missing, wrong, rotated or revoked key or an ended session,
 *   429 after too many failures.
 */
export async function callerOf(
  signIn: SignIn,
  req: IncomingMessage,
  request?: CenterRequest,
): Promise<Caller> {
  // Only the data folder's owner can open its socket: they administer it, as the CLI does.
  if (fromLocalSocket(req)) {
    return { name: osUserName(), access: 'admin', signedInWith: 'os-user', channel: 'cli' };
  }
  const { storage, oidc, sessions } = signIn;
  const key = bearerOf(req);
  const idOf = (kind: string, secret: string) =>
    `${kind}:${createHash('sha256').update(secret).digest('hex')}`;
  if (key !== undefined && oidc && looksLikeJwt(key)) {
    const credential: Credential = {
      id: idOf('jwt', key),
      live: () => oidc.verifyBearer(key).then(() => true),
    };
    const who = await oidc.verifyBearer(key);
    return { ...callerFrom({ ...who, signedInWith: 'oidc' }, 'api'), credential };
  }
  if (key !== undefined) {
    const who = await signInWith(signIn, req, key);
    const { keyId } = who;
    const caller = callerFrom(who, 'api');
    if (who.signedInWith !== 'key' || keyId === undefined) return caller;
    const credential: Credential = {
      id: idOf('key', key),
      live: async () => (await storage.operators().authenticate(key))?.keyId === keyId,
    };
    return { ...caller, credential };
  }
  const operator = request?.operator;
  if (operator) {
    // A browser names the origin of its writes; a script calling the API does not.
    const channel = req.headers.origin === undefined ? 'api' : 'page';
    return callerFrom({ ...operator, signedInWith: 'app' }, channel);
  }
  const id = sessions.idOf(req, request?.mountPath);
  const session = id === undefined ? undefined : await sessions.byId(id);
  if (id !== undefined && session) {
    const credential: Credential = {
      id: `session:${session.idHash}`,
      expiresAt: session.expiresAt,
      live: async () => {
        const now = await sessions.byId(id);
        return now !== null && now.keyId === session.keyId;
      },
    };
    return { ...callerFrom(session, 'page'), session, credential };
  }
  if (await needsSignIn(signIn)) {
    throw unauthorized(
      session === null
        ? 'your session has ended (signed out, expired, or its key rotated or revoked)'
        : 'this server needs a key',
    );
  }
  // A browser names the (checked) origin of its writes; a script calling the API does not.
  const channel = req.headers.origin === undefined ? 'api' : 'page';
  return { name: signIn.operator, access: 'admin', signedInWith: 'local', channel };
}

/**
 * How `caller` answers through the store: an admin by name (nothing checked), an operator
 * with their identity (the store admits only each question's audience).
 * @throws a `forbidden` error for a viewer.
 */
export function answererOf(caller: Caller): AnswerOptions {
  if (caller.access === 'viewer') {
    refuseAnswerer(`${caller.name} is a viewer: viewers read questions, they do not answer`);
  }
  const how = { signedInWith: caller.signedInWith, channel: caller.channel };
  return caller.identity
    ? { ...how, identity: caller.identity }
    : { ...how, answeredBy: caller.name };
}

/**
 * Why `caller` may not answer `pause` (`null`: they may), for the page to offer an answer
 * form or say why not: the store's own check ({@link answererOf}'s identity against the
 * audience and the barred requester) decides when the answer comes.
 */
export function readOnlyReason(caller: Caller, pause: Pending): ReadOnlyReason | null {
  if (caller.access === 'viewer') return 'viewer';
  const identity = caller.identity;
  if (!identity) return null;
  const { names, roles } = pause.audience;
  const admitted =
    (names.length === 0 && roles.length === 0) ||
    names.includes(identity.name) ||
    roles.some((role) => identity.roles?.includes(role));
  if (!admitted) return 'audience';
  return pause.requesterMayNotAnswer && pause.requester === identity.name ? 'requester' : null;
}

/** @throws a `forbidden` error unless `caller` is an admin. */
export function requireAdmin(caller: Caller, doing: string): void {
  if (caller.access !== 'admin') {
    throw forbiddenError(
      `only an admin may ${doing}; ${caller.name} is ${caller.access === 'viewer' ? 'a viewer' : 'an operator'}`,
    );
  }
}

/** The page's sign-in methods: a key, and the identity provider when the page may use it; none when not needed. */
async function methodsOf(signIn: SignIn): Promise<SessionResponse['methods']> {
  if (!(await needsSignIn(signIn))) return [];
  return signIn.oidc?.clientId ? ['key', 'oidc'] : ['key'];
}

function sessionResponse(caller: Caller, methods: SessionResponse['methods']): SessionResponse {
  return {
    signedIn: true,
    name: caller.name,
    access: caller.access,
    signedInWith: caller.signedInWith,
    csrfToken: caller.session?.csrfToken ?? null,
    expiresAt: caller.session?.expiresAt.toISOString() ?? null,
    methods,
  };
}

/**
 * Serves the sign-in routes, which a request reaches before it is signed in:
 * `GET /api/session` (who is signed in, and the page's CSRF token), `POST /api/sign-in`
 * (a key in, a session cookie out) and `POST /api/sign-out` (the session ends).
 * @returns false for any other path.
 */
export async function handleSignIn(
  signIn: SignIn,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  request?: CenterRequest,
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
      throw usageError(
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
    throw usageError(
      'only a page session signs out: an API key stops working when `runner operators revoke` or `rotate` replaces it',
    );
  }
  checkCsrf(req, caller.session);
  await signIn.sessions.end(res, caller.session, request?.mountPath);
  signIn.signedOut?.();
  sendJson(res, 200, { signedOut: true } satisfies SignOutResponse);
  return true;
}
