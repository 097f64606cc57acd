import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApprovalCenterError } from '../errors.js';
import { type AccessRole, accessOf } from './roles.js';

// The page's sign-in: a random id in an HttpOnly, SameSite=Strict cookie, only its SHA-256
// kept by the store, and a CSRF token derived from the id that the page sends with each write.

/** Who signed in on the page, as {@link PageSignIns.open} keeps them. */
export interface PageSignInIdentity {
  /** Recorded as `answeredBy` with each answer given through the sign-in. */
  name: string;
  access: AccessRole;
  /** Every role, the access role among them (audience roles such as `finance` too). */
  roles: string[];
  /** How they proved who they are: an operator's key, the shared token, an OpenID provider. */
  signedInWith: 'key' | 'token' | 'oidc';
  /** For `key`: the key's id, so that rotating or revoking the operator ends the sign-in. */
  keyId?: string;
}

/** A live sign-in, as a request's cookie finds it. */
export interface PageSignIn extends PageSignInIdentity {
  /** The synchronizer token each cookie-authenticated write sends as `X-CSRF-Token`. */
  csrfToken: string;
  expiresAt: Date;
  /** The SHA-256 of the sign-in's id, as stored. */
  idHash: string;
}

/** A sign-in as a {@link SignInStore} keeps it: never the id, only its hash. */
export interface StoredSignIn {
  idHash: string;
  name: string;
  access: AccessRole;
  roles: string[];
  signedInWith: PageSignInIdentity['signedInWith'];
  /** What binds it to its credential: a key's id, a keyed digest of the shared token, or null. */
  credential: string | null;
  expiresAt: Date;
}

/**
 * Where page sign-ins are kept: the port an app implements over its own tables (or takes
 * {@link memorySignInStore}). Every method may be called by several processes at once.
 */
export interface SignInStore {
  /** Keeps a new sign-in; may forget expired ones on the way. */
  insert(signIn: StoredSignIn): Promise<void>;
  /**
   * The unexpired sign-in of `idHash`, with, for one opened with a key, the operator's live
   * key id and roles as they are now (none: the operator is revoked or gone).
   */
  find(
    idHash: string,
  ): Promise<(StoredSignIn & { operator?: { keyId: string; roles: string[] } }) | undefined>;
  /** Forgets the sign-in of `idHash` (signed out). */
  delete(idHash: string): Promise<void>;
}

/** How page sign-ins are kept and sent. */
export interface PageSignInOptions {
  /** How long a sign-in lasts from sign-in, in ms (not extended by use). */
  ttlMs: number;
  /** Served behind TLS: the cookie is `Secure` and `__Host-` named. */
  secure: boolean;
  /** The shared token, when there is one: a sign-in opened with it ends when it changes. */
  token?: string | undefined;
  /** The cookie's name (default `approval_center_session`), `__Host-` prefixed when `secure`. */
  cookieName?: string | undefined;
}

/** The header a cookie-authenticated write carries the sign-in's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

const hashOf = (id: string) => createHash('sha256').update(id).digest('hex');
const keyed = (key: string, text: string) =>
  createHmac('sha256', key).update(text).digest('base64url');

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Compares two secrets in constant time (equal-length digests, so no length leak). */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
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
 * The page's sign-ins over a {@link SignInStore}: opened with a cookie, found by it, ended.
 *
 * @example
 * const signIns = new PageSignIns(memorySignInStore(), { ttlMs: 8 * 3_600_000, secure: true });
 * const signIn = await signIns.open(res, { name: 'ada', access: 'admin', roles: ['admin'],
 *   signedInWith: 'oidc' });
 * res.end(JSON.stringify({ csrfToken: signIn.csrfToken }));
 */
export class PageSignIns {
  constructor(
    private readonly store: SignInStore,
    readonly options: PageSignInOptions,
  ) {}

  /** Served behind TLS: cookies the sign-in sets are `Secure`. */
  get secure(): boolean {
    return this.options.secure;
  }

  /** The cookie's name: `__Host-` prefixed behind TLS, so no subdomain can set it. */
  get cookieName(): string {
    return this.cookieNameAt('');
  }

  /**
   * The cookie's name for the center mounted at `mountPath`: `__Host-` (which must be
   * `Path=/`) at the root behind TLS, `__Secure-` under a path.
   */
  cookieNameAt(mountPath: string): string {
    const name = this.options.cookieName ?? 'approval_center_session';
    if (!this.options.secure) return name;
    return mountPath === '' ? `__Host-${name}` : `__Secure-${name}`;
  }

  /**
   * Opens a sign-in for `who` and appends its cookie to `res` (`HttpOnly; SameSite=Strict;
   * Path=` the center's folder, `/approvals/` when mounted at `mountPath` `/approvals`, `/` at
   * the root; `Secure` behind TLS, `Max-Age` its lifetime). Only the SHA-256 of the random id
   * is stored.
   * @returns the sign-in, with the CSRF token the page must send with each write.
   */
  async open(res: ServerResponse, who: PageSignInIdentity, mountPath = ''): Promise<PageSignIn> {
    const id = randomBytes(32).toString('base64url');
    const idHash = hashOf(id);
    const expiresAt = new Date(Date.now() + this.options.ttlMs);
    const { name, access, roles, signedInWith } = who;
    const credential = this.credentialOf(who, id);
    await this.store.insert({ idHash, name, access, roles, signedInWith, credential, expiresAt });
    // Appended: a sign-in's callback may clear another cookie in the same response.
    const maxAge = Math.floor(this.options.ttlMs / 1000);
    res.appendHeader('set-cookie', this.cookie(id, maxAge, mountPath));
    return { ...who, csrfToken: keyed(id, 'csrf'), expiresAt, idHash };
  }

  /** The cookie value (the sign-in's id) `req` carries, if any, for the center at `mountPath`. */
  idOf(req: IncomingMessage, mountPath = ''): string | undefined {
    return cookieOf(req, this.cookieNameAt(mountPath));
  }

  /**
   * The live sign-in of the cookie value `id`, or `null` when it has ended (expired, signed
   * out, its operator's key rotated or revoked, the shared token changed). A key's sign-in
   * takes its operator's roles as they are now.
   */
  async byId(id: string): Promise<PageSignIn | null> {
    const idHash = hashOf(id);
    const row = await this.store.find(idHash);
    if (!row || row.expiresAt.getTime() <= Date.now()) return null;
    const { signedInWith, credential } = row;
    let roles = row.roles;
    if (signedInWith === 'key') {
      if (credential === null || row.operator?.keyId !== credential) return null;
      roles = row.operator.roles;
    }
    if (signedInWith === 'token') {
      const { token } = this.options;
      if (!token || credential === null || !sameSecret(keyed(token, id), credential)) return null;
    }
    return {
      name: row.name,
      access: signedInWith === 'key' ? accessOf(roles) : row.access,
      roles,
      signedInWith,
      ...(signedInWith === 'key' && credential ? { keyId: credential } : {}),
      csrfToken: keyed(id, 'csrf'),
      expiresAt: row.expiresAt,
      idHash,
    };
  }

  /** Ends `signIn` in the store and clears its cookie: the old cookie is refused from now on. */
  async end(res: ServerResponse, signIn: PageSignIn, mountPath = ''): Promise<void> {
    await this.store.delete(signIn.idHash);
    res.setHeader('set-cookie', this.cookie('', 0, mountPath));
  }

  private cookie(value: string, maxAgeSeconds: number, mountPath: string): string {
    const secure = this.options.secure ? '; Secure' : '';
    const name = this.cookieNameAt(mountPath);
    return `${name}=${value}; HttpOnly; SameSite=Strict; Path=${mountPath}/; Max-Age=${maxAgeSeconds}${secure}`;
  }

  /** What binds a sign-in to the credential it was opened with (null: nothing beyond expiry). */
  private credentialOf(who: PageSignInIdentity, id: string): string | null {
    if (who.signedInWith === 'key') return who.keyId ?? null;
    // Keyed by the id, which the store never holds: the row does not reveal the token.
    if (who.signedInWith === 'token' && this.options.token) return keyed(this.options.token, id);
    return null;
  }
}

/**
 * A write authenticated by the sign-in's cookie must carry its CSRF token in `X-CSRF-Token`
 * (compared in constant time): a page of another site can make the browser send the cookie,
 * never read the token.
 * @throws {ApprovalCenterError} `forbidden` naming what is missing.
 */
export function checkCsrf(req: IncomingMessage, signIn: Pick<PageSignIn, 'csrfToken'>): void {
  const given = req.headers[CSRF_HEADER];
  if (typeof given !== 'string' || given === '') {
    throw new ApprovalCenterError(
      'forbidden',
      `a write signed in by the page's session must carry its CSRF token in ${CSRF_HEADER} (GET /api/session gives it); nothing was changed`,
    );
  }
  if (!sameSecret(given, signIn.csrfToken)) {
    throw new ApprovalCenterError(
      'forbidden',
      `the ${CSRF_HEADER} header is not this session's CSRF token; nothing was changed`,
    );
  }
}

/**
 * A {@link SignInStore} in this process's memory: for one process, and for tests. `operators`
 * gives a key operator's live key id and roles (none: a key's sign-in is refused).
 */
export function memorySignInStore(
  operators: (name: string) => { keyId: string; roles: string[] } | undefined = () => undefined,
): SignInStore {
  const rows = new Map<string, StoredSignIn>();
  return {
    async insert(signIn) {
      const now = Date.now();
      for (const [hash, row] of rows) if (row.expiresAt.getTime() <= now) rows.delete(hash);
      rows.set(signIn.idHash, { ...signIn, roles: [...signIn.roles] });
    },
    async find(idHash) {
      const row = rows.get(idHash);
      if (!row || row.expiresAt.getTime() <= Date.now()) return undefined;
      const operator = row.signedInWith === 'key' ? operators(row.name) : undefined;
      return { ...row, ...(operator ? { operator } : {}) };
    },
    async delete(idHash) {
      rows.delete(idHash);
    },
  };
}
