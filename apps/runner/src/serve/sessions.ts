import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AccessRole, accessOf } from '@x/approval-center';
import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { forbiddenError } from '../errors.js';
import type { Storage } from '../storage/index.js';
import { sameSecret } from './http.js';

// The page's sign-in: a random session id in an HttpOnly cookie, only its SHA-256 kept in
// `runner.sessions`, and a CSRF token derived from it that the page sends with each write.

/** How the server keeps page sessions: their lifetime, the cookie's Secure, the shared token. */
export interface SessionOptions {
  /** How long a session lasts from sign-in, in ms (RUNNER_SESSION_TTL). */
  ttlMs: number;
  /** Served behind TLS (an https:// --public-url): the cookie is `Secure` and `__Host-` named. */
  secure: boolean;
  /** The server's shared --token: a session opened with it ends when the token changes. */
  token?: string | undefined;
}

/** Who signed in, as {@link openSession} keeps them. */
export interface SessionIdentity {
  /** Recorded as `answeredBy` with each answer given through the session. */
  name: string;
  access: AccessRole;
  /** Every role, the access role among them (audience roles such as `finance` too). */
  roles: string[];
  /** How they proved who they are: an operator's key, the shared token, an OpenID provider. */
  signedInWith: 'key' | 'token' | 'oidc';
  /** For `key`: the key's id, so that rotating or revoking the operator ends the session. */
  keyId?: string;
}

/** A live session, as a request's cookie finds it. */
export interface Session extends SessionIdentity {
  /** The synchronizer token each cookie-authenticated write sends as `X-CSRF-Token`. */
  csrfToken: string;
  expiresAt: Date;
  /** The SHA-256 of the session id, as stored. */
  idHash: string;
}

/** The header a cookie-authenticated write carries the session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

const hashOf = (id: string) => createHash('sha256').update(id).digest('hex');
const keyed = (key: string, text: string) =>
  createHmac('sha256', key).update(text).digest('base64url');

/** The session cookie's name: `__Host-` prefixed behind TLS, so no subdomain can set it. */
export function sessionCookie(options: Pick<SessionOptions, 'secure'>): string {
  return options.secure ? '__Host-runner_session' : 'runner_session';
}

function cookieHeader(options: SessionOptions, value: string, maxAgeSeconds: number): string {
  const secure = options.secure ? '; Secure' : '';
  return `${sessionCookie(options)}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSeconds}${secure}`;
}

/** The value of cookie `name` in `req`, if it has one. */
export function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Opens a session for `who`, who just signed in (with a key, the shared token or OIDC), and
 * sets its cookie on `res` (`HttpOnly; SameSite=Strict; Path=/`, `Secure` behind TLS,
 * `Max-Age` the session's lifetime). Only the SHA-256 of the random id is stored. Expired
 * sessions are swept on the way.
 * @returns the session, with the CSRF token the page must send with each write.
 * @example
 * const session = await openSession(storage, res, { name: 'ada', access: 'admin',
 *   roles: ['admin'], signedInWith: 'oidc' }, sessionOptions);
 * sendJson(res, 200, { csrfToken: session.csrfToken });
 */
export async function openSession(
  storage: Storage,
  res: ServerResponse,
  who: SessionIdentity,
  options: SessionOptions,
): Promise<Session> {
  const id = randomBytes(32).toString('base64url');
  const idHash = hashOf(id);
  const expiresAt = new Date(Date.now() + options.ttlMs);
  const credential = credentialOf(who, id, options);
  await storage.db.execute(sql`delete from runner.sessions where expires_at <= now()`);
  await storage.db.execute(sql`insert into runner.sessions
      (id_hash, name, access, roles, signed_in_with, credential, expires_at)
    values (${idHash}, ${who.name}, ${who.access}, string_to_array(${who.roles.join(',')}, ','),
      ${who.signedInWith}, ${credential}, ${expiresAt.toISOString()}::timestamptz)`);
  // Appended: the OIDC callback clears its state cookie in the same response.
  res.appendHeader('set-cookie', cookieHeader(options, id, Math.floor(options.ttlMs / 1000)));
  return { ...who, csrfToken: keyed(id, 'csrf'), expiresAt, idHash };
}

/** What binds a session to the credential it was opened with (null: nothing beyond expiry). */
function credentialOf(who: SessionIdentity, id: string, options: SessionOptions): string | null {
  if (who.signedInWith === 'key') return who.keyId ?? null;
  // Keyed by the id, which the database never holds: the row does not reveal the token.
  if (who.signedInWith === 'token' && options.token) return keyed(options.token, id);
  return null;
}

/**
 * The live session `req`'s cookie names: `undefined` when it carries none, `null` when the
 * one it carries has ended (expired, signed out, its operator's key rotated or revoked, the
 * shared token changed). A key's session takes its operator's roles as they are now.
 */
export async function sessionOf(
  storage: Storage,
  req: IncomingMessage,
  options: SessionOptions,
): Promise<Session | null | undefined> {
  const id = cookieOf(req, sessionCookie(options));
  if (id === undefined) return undefined;
  return sessionById(storage, id, options);
}

/**
 * The live session of the cookie value `id`, or `null` when it has ended (as
 * {@link sessionOf}): also how an open event stream checks that its session still holds.
 */
export async function sessionById(
  storage: Storage,
  id: string,
  options: SessionOptions,
): Promise<Session | null> {
  const idHash = hashOf(id);
  const result = await storage.db.execute(sql`select s.name, s.access, s.roles,
      s.signed_in_with, s.credential, s.expires_at, o.key_id, o.roles as operator_roles
    from runner.sessions s
    left join runner.operators o on o.name = s.name and o.revoked_at is null
    where s.id_hash = ${idHash} and s.expires_at > now()`);
  const row = rowsOf(result)[0];
  if (!row) return null;
  const signedInWith = String(row.signed_in_with) as SessionIdentity['signedInWith'];
  const credential = row.credential == null ? null : String(row.credential);
  let roles = row.roles as string[];
  if (signedInWith === 'key') {
    if (credential === null || row.key_id !== credential) return null;
    roles = row.operator_roles as string[];
  }
  if (signedInWith === 'token') {
    if (!options.token || credential === null || !sameSecret(keyed(options.token, id), credential))
      return null;
  }
  return {
    name: String(row.name),
    access: signedInWith === 'key' ? accessOf(roles) : (String(row.access) as AccessRole),
    roles,
    signedInWith,
    ...(signedInWith === 'key' && credential ? { keyId: credential } : {}),
    csrfToken: keyed(id, 'csrf'),
    expiresAt: row.expires_at instanceof Date ? row.expires_at : new Date(String(row.expires_at)),
    idHash,
  };
}

/** Ends `session` on the server and clears its cookie: the old cookie is refused from now on. */
export async function endSession(
  storage: Storage,
  res: ServerResponse,
  session: Session,
  options: SessionOptions,
): Promise<void> {
  await storage.db.execute(sql`delete from runner.sessions where id_hash = ${session.idHash}`);
  res.setHeader('set-cookie', cookieHeader(options, '', 0));
}

/**
 * A write authenticated by the session cookie must carry the session's CSRF token in
 * `X-CSRF-Token` (compared in constant time): a page of another site can make the browser
 * send the cookie, never read the token.
 * @throws a `forbidden` error naming what is missing.
 */
export function checkCsrf(req: IncomingMessage, session: Session): void {
  const given = req.headers[CSRF_HEADER];
  if (typeof given !== 'string' || given === '') {
    throw forbiddenError(
      `a write signed in by the page's session must carry its CSRF token in ${CSRF_HEADER} (GET /api/session gives it); nothing was changed`,
    );
  }
  if (!sameSecret(given, session.csrfToken)) {
    throw forbiddenError(
      `the ${CSRF_HEADER} header is not this session's CSRF token; nothing was changed`,
    );
  }
}
