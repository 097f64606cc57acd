import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type AppOperator, cookieOf } from '@x/approval-center';
import express, { type Router } from 'express';

/** The app's people (a demo list: a real app has its own users table and passwords). */
export const PEOPLE: Readonly<Record<string, AppOperator>> = {
  ada: { name: 'ada', roles: ['operator'] },
  vic: { name: 'vic', roles: ['viewer'] },
};

const COOKIE = 'app_session';

/** One signed-in browser: who it is, and the token its writes carry against CSRF. */
interface AppSession {
  person: AppOperator;
  csrfToken: string;
}

/**
 * The app's own sign-in: a form at `/login` and a session cookie (HttpOnly, SameSite=Strict),
 * kept in this process's memory.
 */
export class AppSignIn {
  readonly #sessions = new Map<string, AppSession>();

  /** The session of `req`'s cookie, or undefined. */
  sessionOf(req: IncomingMessage): AppSession | undefined {
    return this.#sessions.get(cookieOf(req, COOKIE) ?? '');
  }

  /**
   * The approval center's `authenticate`: the person signed in, with the CSRF token the
   * center's page sends with each write, or nothing.
   */
  readonly authenticate = (req: IncomingMessage): AppOperator | undefined => {
    const session = this.sessionOf(req);
    return session && { ...session.person, csrfToken: session.csrfToken };
  };

  /**
   * `GET /login`, `POST /login` (a name from {@link PEOPLE}) and `POST /logout`; the form
   * links to `providerLogin` too when the people may sign in with an OpenID provider.
   */
  routes(providerLogin?: string): Router {
    const router = express.Router();
    router.get('/login', (req, res) => {
      const next = safeNext(req.query.next);
      res.type('html').send(`<!doctype html><title>Sign in</title>
<form method="post" action="/login?next=${encodeURIComponent(next)}">
<label>Name <input id="name" name="name" autocomplete="username"></label>
<button id="sign-in">Sign in</button></form>${
        providerLogin
          ? `<p><a id="oidc" href="${providerLogin}">Sign in with your provider</a></p>`
          : ''
      }`);
    });
    router.post('/login', express.urlencoded({ extended: false }), (req, res) => {
      const person = PEOPLE[String(req.body?.name ?? '')];
      if (!person) return void res.status(401).type('text').send('nobody of that name here');
      const id = randomBytes(32).toString('base64url');
      this.#sessions.set(id, { person, csrfToken: randomBytes(32).toString('base64url') });
      res.cookie(COOKIE, id, { httpOnly: true, sameSite: 'strict', path: '/' });
      res.redirect(303, safeNext(req.query.next));
    });
    router.post('/logout', (req, res) => {
      this.#sessions.delete(cookieOf(req, COOKIE) ?? '');
      res.clearCookie(COOKIE, { path: '/' }).redirect(303, '/login');
    });
    return router;
  }
}

/** Where to go after signing in: a path of this app only, never another site. */
function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])/.test(next) ? next : '/';
}
