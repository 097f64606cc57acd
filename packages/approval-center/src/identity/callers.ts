import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AnswerOptions, Identity, Pending } from '@x/askuser';
import type { ReadOnlyReason } from '../contract/index.js';
import { ApprovalCenterError } from '../errors.js';
import type { Credential } from '../live/event-hub.js';
import type { AuthenticatedOperator } from './authenticate.js';
import type { Oidc } from './oidc.js';
import { looksLikeJwt } from './oidc.js';
import {
  recordFailedSignIn,
  refuseWhileLimited,
  type SignInAudit,
  type SignInLimiters,
  sourceOf,
} from './rate-limit.js';
import type { AccessRole } from './roles.js';
import {
  type PageSignIn,
  type PageSignInIdentity,
  type PageSignIns,
  sameSecret,
} from './sign-ins.js';

/**
 * What the center knows of a request beyond its URL (`CenterRequest`, as far as signing in
 * reads it): who the app's `authenticate` says sent it, and the path the center is mounted at.
 */
export interface SignInRequest {
  operator: AuthenticatedOperator | undefined;
  mountPath: string;
}

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
   * The CSRF token the app's own sign-in gave (the `csrfToken` `authenticate` returned): the
   * center's writes must carry it.
   */
  csrfToken?: string;
  /**
   * What signed the request in, for an event stream to look up again while it stays open;
   * none for what lasts as long as the server (the shared token, the local operator, the
   * data folder's socket).
   */
  credential?: Credential;
}

/** An operator whose API key signed a request in, as {@link OperatorKeys.authenticate} finds them. */
export interface KeyOperator {
  name: string;
  access: AccessRole;
  /** Every role, the access role among them. */
  roles?: readonly string[] | undefined;
  /** The id of the key: a sign-in opened with it ends when the operator's key is rotated or revoked. */
  keyId: string;
}

/** The operators' API keys, as the host keeps them (the runner: its `runner.operators` table). */
export interface OperatorKeys {
  /** True when any operator is live: then every request needs a key. */
  anyLive(): Promise<boolean>;
  /** Whose key `key` claims to be (live or not), for the audit log of a failed sign-in. */
  ownerOf(key: string): Promise<string | undefined>;
  /** The live operator whose key `key` is, or undefined. */
  authenticate(key: string): Promise<KeyOperator | undefined>;
}

/**
 * How a server signs requests in: the operators' keys, its shared token, the name of who
 * answers through it, the page's sign-ins, and the audit log failed sign-ins go to.
 */
export interface SignInContext {
  operators: OperatorKeys;
  /** Where `sign-in-failed` (and `signed-in`) entries are appended; none when it keeps no audit log. */
  audit?: SignInAudit | undefined;
  /** A shared secret every request may present instead of an operator's key: it signs in an admin. */
  token: string | undefined;
  /** Who answers with the shared token or, when nothing needs a key, locally; `null`: not known. */
  operator: string | null;
  sessions: PageSignIns;
  /** Failed sign-ins counted per source address and per operator name. */
  limiters: SignInLimiters;
  /** The identity provider whose bearer JWTs sign in too. */
  oidc?: Oidc | undefined;
  /** A session was signed out: open event streams look at their credentials again. */
  signedOut?: () => void;
  /**
   * The name of who sent a request the host vouches for as its administrator (the runner: a
   * request over its data folder's socket, as the OS user; `null`: not known), or undefined for
   * any other request.
   */
  hostAdmin?: ((req: IncomingMessage) => string | null | undefined) | undefined;
}

/** The refusals of a missing or wrong key or session: `/api/session` answers them as signed out. */
export const signedOutRefusals = new WeakSet<ApprovalCenterError>();

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
export async function needsSignIn(signIn: SignInContext): Promise<boolean> {
  return Boolean(signIn.token) || signIn.oidc !== undefined || (await signIn.operators.anyLive());
}

/**
 * Who `key` signs in: the shared token's admin or a live operator (when `name` is given,
 * only that one).
 * @throws {ApprovalCenterError} 429 while the source address or the operator named has failed too often
 *   (nothing checked), 401 for a wrong key, recorded in the audit log as `sign-in-failed`.
 */
export async function signInWith(
  signIn: SignInContext,
  req: IncomingMessage,
  key: string,
  name?: string,
): Promise<PageSignInIdentity> {
  const { operators, limiters } = signIn;
  const source = sourceOf(req);
  const owner = name ?? (await operators.ownerOf(key));
  refuseWhileLimited(limiters, source, owner);
  if (signIn.token && sameSecret(key, signIn.token)) {
    const tokenName = signIn.operator ?? 'admin';
    if (name === undefined || name === tokenName) {
      return { name: tokenName, access: 'admin', roles: ['admin'], signedInWith: 'token' };
    }
  }
  const operator = await operators.authenticate(key);
  if (operator && (name === undefined || name === operator.name)) {
    const { roles, access, keyId } = operator;
    return { name: operator.name, access, roles: [...(roles ?? [])], signedInWith: 'key', keyId };
  }
  const why =
    owner === undefined
      ? "not the server's token nor any operator's key"
      : `not a live key of ${owner} (wrong, rotated or revoked)`;
  await recordFailedSignIn(signIn, { source, name: owner, why, signedInWith: 'key' });
  // One answer for every dead key: the audit log keeps whose it was, the caller is told no more.
  throw unauthorized(
    "this key is not the server's token nor a live operator's key (wrong, rotated or revoked)",
  );
}

/** A caller as {@link callerOf} makes one, from who signed in and through what. */
export function callerFrom(
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

/** The caller the host app's own sign-in found (`authenticate`), with the CSRF token its writes carry. */
export function appCallerOf(req: IncomingMessage, operator: AuthenticatedOperator): Caller {
  // A browser names the origin of its writes; a script calling the API does not.
  const channel = req.headers.origin === undefined ? 'api' : 'page';
  const caller = callerFrom({ ...operator, signedInWith: 'app' }, channel);
  return operator.csrfToken === undefined ? caller : { ...caller, csrfToken: operator.csrfToken };
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
  signIn: SignInContext,
  req: IncomingMessage,
  request?: SignInRequest,
): Promise<Caller> {
  // The host vouches for it (the runner: its data folder's owner): an admin, as on the CLI.
  const hostAdmin = signIn.hostAdmin?.(req);
  if (hostAdmin !== undefined) {
    return { name: hostAdmin, access: 'admin', signedInWith: 'os-user', channel: 'cli' };
  }
  const { operators, oidc, sessions } = signIn;
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
      live: async () => (await operators.authenticate(key))?.keyId === keyId,
    };
    return { ...caller, credential };
  }
  const operator = request?.operator;
  if (operator) return appCallerOf(req, operator);
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
 * with their identity (the store admits only each question's audience). A viewer is refused
 * by `refuse` (default: an {@link ApprovalCenterError} `forbidden`; a host may count refusals).
 * @throws {ApprovalCenterError} `forbidden` (or what `refuse` throws) for a viewer.
 */
export function answererOf(
  caller: Caller,
  refuse: (message: string) => never = refuseAsForbidden,
): AnswerOptions {
  if (caller.access === 'viewer') {
    refuse(`${caller.name} is a viewer: viewers read questions, they do not answer`);
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

function refuseAsForbidden(message: string): never {
  throw new ApprovalCenterError('forbidden', message);
}

/** @throws {ApprovalCenterError} `forbidden` unless `caller` is an admin. */
export function requireAdmin(caller: Caller, doing: string): void {
  if (caller.access !== 'admin') {
    throw new ApprovalCenterError(
      'forbidden',
      `only an admin may ${doing}; ${caller.name} is ${caller.access === 'viewer' ? 'a viewer' : 'an operator'}`,
    );
  }
}
