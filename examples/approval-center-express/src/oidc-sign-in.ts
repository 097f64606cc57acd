import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AppOperator,
  ApprovalCenterError,
  cookieOf,
  memorySignInStore,
  type Oidc,
  type PageSignIn,
  PageSignIns,
  SIGN_IN_TTL_MS,
} from '@x/approval-center';

/** Ties a begun sign-in to the browser that began it, so nobody signs a victim in as themselves. */
const STATE_COOKIE = 'app_oidc_state';

/**
 * The approval center's page signed in through an OpenID provider, under the center's path:
 * `GET <mount>/auth/oidc/login` goes to the provider, which sends the browser back to
 * `<publicUrl><mount>/auth/oidc/callback`; the sign-in's cookie is scoped to the center's
 * folder (`Path=<mount>/`).
 */
export class OidcSignIn {
  readonly #signIns: PageSignIns;

  /**
   * @param oidc the provider (`Oidc.discover`), whose page client has the callback registered
   * @param publicUrl where people open the app (`https://...` marks the cookie `Secure`)
   * @param mountPath the center's path in the app, e.g. `/approvals`
   */
  constructor(
    readonly oidc: Oidc,
    readonly publicUrl: string,
    readonly mountPath: string,
  ) {
    const secure = new URL(publicUrl).protocol === 'https:';
    this.#signIns = new PageSignIns(memorySignInStore(), { ttlMs: 8 * 3_600_000, secure });
  }

  /** The page sign-in of `req`'s cookie, or undefined. */
  async signInOf(req: IncomingMessage): Promise<PageSignIn | undefined> {
    const id = this.#signIns.idOf(req, this.mountPath);
    return (id && (await this.#signIns.byId(id))) || undefined;
  }

  /** Who the page sign-in of `req` is, for the center's `authenticate`. */
  async personOf(req: IncomingMessage): Promise<AppOperator | undefined> {
    const signIn = await this.signInOf(req);
    return signIn && { name: signIn.name, roles: signIn.roles, csrfToken: signIn.csrfToken };
  }

  /** Answers the sign-in's two routes (paths inside the center); false for any other request. */
  async answer(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    if (req.method !== 'GET') return false;
    const callback = new URL(`${this.mountPath}/auth/oidc/callback`, this.publicUrl).toString();
    if (url.pathname === '/auth/oidc/login') {
      const { url: to, state } = await this.oidc.beginSignIn(callback);
      res.writeHead(302, {
        location: to,
        'cache-control': 'no-store',
        'set-cookie': this.#stateCookie(state, SIGN_IN_TTL_MS / 1000),
      });
      res.end();
      return true;
    }
    if (url.pathname !== '/auth/oidc/callback') return false;
    res.setHeader('set-cookie', this.#stateCookie('', 0));
    if (cookieOf(req, STATE_COOKIE) !== url.searchParams.get('state')) {
      throw new ApprovalCenterError(
        'unauthorized',
        `this sign-in was not begun in this browser: open ${this.mountPath}/auth/oidc/login again`,
      );
    }
    const who = await this.oidc.finishSignIn(url.searchParams);
    await this.#signIns.open(res, { ...who, signedInWith: 'oidc' }, this.mountPath);
    res.writeHead(303, { location: `${this.mountPath}/`, 'cache-control': 'no-store' });
    res.end();
    return true;
  }

  // Lax, not Strict: the provider's redirect back is a cross-site navigation.
  #stateCookie(value: string, maxAge: number): string {
    const secure = this.#signIns.secure ? '; Secure' : '';
    return `${STATE_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=${this.mountPath}/auth/oidc; Max-Age=${maxAge}${secure}`;
  }
}
