import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApprovalCenterError } from './errors.js';
import { checkHost, checkSingleHeaders } from './http/checks.js';
import { isAsset, sendAsset } from './http/page.js';
import { answerOf, type ErrorClassifier, sendError } from './http/send.js';
import {
  type Authenticate,
  type AuthenticatedOperator,
  authenticatedBy,
} from './identity/authenticate.js';
import type { Caller } from './identity/callers.js';
import type { OidcRoutesOptions } from './identity/oidc-routes.js';
import { type ChannelsOptions, openRoutes } from './open-routes.js';
import { ownRoutesOf } from './own-routes.js';
import type { PoliciesOptions } from './policies-route.js';
import type { QuestionsOptions } from './questions/options.js';

/** What the center knows of a request beyond its URL, for the host's routes. */
export interface CenterRequest {
  /** Who the app's `authenticate` says sent it; undefined without one, or when it does not know them. */
  operator: AuthenticatedOperator | undefined;
  /**
   * The path the browser sees the center at, without a trailing slash (`/approvals`, or `''`
   * at the root): `basePath`, or Express's mount path (`req.baseUrl`).
   */
  mountPath: string;
  /**
   * Answers the center's own API routes (the question API, given `questions`; `GET
   * /api/policies`, given `policies`); true when it did. The host's routes call it once they
   * know who is calling (viewers may read), with the `caller` they found (without one, the
   * question API acts for `operator`).
   */
  ownRoutes: (caller?: Caller) => Promise<boolean>;
}

/**
 * Routes of the host app served under the center's path and checks: `url.pathname` is the
 * path inside the center (`/api/...`); true when it answered the request.
 */
export type CenterRoutes = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  request: CenterRequest,
) => Promise<boolean>;

/** Options of {@link createApprovalCenter}. */
export interface ApprovalCenterOptions {
  /**
   * The path the center is mounted at, e.g. `/approvals`; default `''` (the root). A request
   * outside it is passed to `next` (Express) or answered 404. Not needed under Express's
   * `app.use('/approvals', center)`, which strips its mount path itself (`req.baseUrl`).
   */
  basePath?: string;
  /**
   * The server is bound to a loopback address: a request must name this machine in its Host
   * header (a page of another site re-pointing its name at 127.0.0.1 is refused). Default false.
   */
  loopbackOnly?: boolean;
  /**
   * The app's own sign-in: who sent a request (their name and roles), or nothing. Asked for
   * each request the routes answer (not the page's files); its operator reaches the routes as
   * `request.operator`. An app whose sign-in is a cookie keeps its own CSRF defence.
   */
  authenticate?: Authenticate;
  /** The host app's own routes under the center's path, tried after the page's files. */
  routes?: CenterRoutes;
  /**
   * The Policies tab (`GET /api/policies`): the active policy set, the database its decisions
   * are recorded in, and the shadow's disagreements. Served to whom `routes` let in (they call
   * `request.ownRoutes()`), or without `routes` to whom `authenticate` knows. Without it the
   * page shows no Policies tab.
   */
  policies?: PoliciesOptions;
  /**
   * The page signs in with an OpenID provider: `GET /auth/oidc/login` goes to it, and its
   * `GET /auth/oidc/callback` opens a page sign-in in `oidc.sessions`, scoped to the center's
   * path; a failed callback is counted, recorded and answered with a page that says why.
   */
  oidc?: OidcRoutesOptions;
  /**
   * Where people open the app, before the center's path (`https://app.example.com`): the
   * provider's callback is under it (unless the provider names its `redirectUri`); default
   * this request's Host.
   */
  publicUrl?: string;
  /** Decision links of emails (`/decide`) and Slack's buttons (`/slack/interactions`). */
  channels?: ChannelsOptions;
  /**
   * The question API: list the pending and recent questions, show one with its run, answer
   * (one or a batch), stop a conversation, and the live feed (`GET /api/events`), for the
   * caller `routes` find or `authenticate` knows. Without it, only the host's `routes` serve them.
   */
  questions?: QuestionsOptions;
  /** How errors that are not the center's are answered; default a 500 reported to `onError`. */
  classifyError?: ErrorClassifier;
  /** An error answering a request that is not the caller's doing; default ignored. */
  onError?: (message: string) => void;
  /** Called by {@link ApprovalCenter.close}, to stop what the host started for the center (its `EventHub`). */
  onClose?: () => Promise<void>;
}

/** A mountable approval center: a Node request handler, and how to stop it. */
export interface ApprovalCenter {
  /**
   * Answers one request: the page, its API and live events. Outside `basePath` it calls
   * `next` when given (Express middleware) or answers 404.
   */
  (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void;
  /**
   * The questions or their runs changed (the app started or resumed a run): the live feed
   * of `questions` looks again now, not at its next poll.
   */
  poke(): void;
  /**
   * Stops what runs for the center (its live feed, `onClose`: the host's, ...); requests in
   * flight are the server's to finish.
   */
  close(): Promise<void>;
}

/**
 * Creates the approval center as one Node request handler, to mount in `node:http`, Express,
 * Fastify (its Node handler) or Hono on Node, at the root or under a path.
 *
 * @example
 * import { createServer } from 'node:http';
 * import { createApprovalCenter } from '@x/approval-center';
 *
 * const center = createApprovalCenter({ basePath: '/approvals' });
 * createServer(center).listen(3000);
 * // Express: app.use('/approvals', createApprovalCenter({}));
 */
export function createApprovalCenter(options: ApprovalCenterOptions): ApprovalCenter {
  const basePath = basePathOf(options.basePath);
  const { routes, classifyError, authenticate, loopbackOnly = false } = options;
  const onError = options.onError ?? (() => {});
  const answerOpenRoute = openRoutes(options);
  const own = ownRoutesOf(options);
  const answer = async (req: IncomingMessage, res: ServerResponse, url: URL, mountPath: string) => {
    try {
      checkSingleHeaders(req);
      if (loopbackOnly) checkHost(req);
      if (isAsset(url.pathname)) {
        await answerAsset(req, res, url.pathname);
        return;
      }
      if (await answerOpenRoute(req, res, url, mountPath)) return;
      if (routes || url.pathname.startsWith('/api/')) {
        const operator = authenticate && (await authenticatedBy(authenticate, req));
        // The host's routes check who is calling before they call it; else `authenticate` did.
        const admitted = routes !== undefined || operator !== undefined;
        const ownRoutes = (caller?: Caller) =>
          own.answer({ req, res, url, operator, caller, admitted });
        if (
          routes
            ? await routes(req, res, url, { operator, mountPath, ownRoutes })
            : await ownRoutes()
        )
          return;
      }
      throw new ApprovalCenterError('not_found', `nothing at ${url.pathname}`);
    } catch (caught) {
      const { error, unexpected } = answerOf(caught, classifyError);
      if (unexpected) onError(`${req.method} ${req.url}: ${(caught as Error)?.message ?? caught}`);
      sendError(res, error);
    }
  };
  const center = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => {
    let place: ReturnType<typeof placeOf>;
    try {
      place = placeOf(req, basePath);
    } catch (caught) {
      sendError(res, answerOf(caught, classifyError).error);
      return;
    }
    if (place === undefined) {
      if (next) next();
      else sendError(res, new ApprovalCenterError('not_found', `nothing at ${req.url}`));
      return;
    }
    if ('redirect' in place) {
      // The page's links are relative: it must be loaded from its folder, with the slash.
      res.writeHead(308, { location: place.redirect, 'cache-control': 'no-store' });
      res.end();
      return;
    }
    void answer(req, res, place.url, place.mountPath);
  };
  return Object.assign(center, {
    poke: () => own.poke(),
    async close() {
      await own.close();
      await options.onClose?.();
    },
  });
}

/** `basePath` without its trailing slash, checked. */
function basePathOf(path: string | undefined): string {
  const trimmed = (path ?? '').replace(/\/+$/, '');
  if (trimmed !== '' && (!trimmed.startsWith('/') || /[?#]/.test(trimmed))) {
    throw new ApprovalCenterError(
      'invalid_argument',
      `basePath "${path}" is not a path: give one like "/approvals" (or leave it out for the root)`,
    );
  }
  return trimmed;
}

/**
 * Where a request is inside the center (its URL with the center's path taken off), a
 * redirect to the page's folder, or undefined when it is outside the center.
 */
function placeOf(
  req: IncomingMessage & { baseUrl?: unknown; originalUrl?: unknown },
  basePath: string,
): { url: URL; mountPath: string } | { redirect: string } | undefined {
  const url = new URL(req.url ?? '/', 'http://localhost');
  // Express took its mount path off `req.url` already and keeps the whole one in `originalUrl`.
  if (typeof req.baseUrl === 'string' && req.baseUrl !== '') {
    const original = new URL(String(req.originalUrl ?? req.url), 'http://localhost');
    if (url.pathname === '/' && !original.pathname.endsWith('/')) {
      return { redirect: `${original.pathname}/${original.search}` };
    }
    return { url, mountPath: req.baseUrl.replace(/\/+$/, '') };
  }
  if (basePath === '') return { url, mountPath: '' };
  if (url.pathname === basePath) return { redirect: `${basePath}/${url.search}` };
  if (!url.pathname.startsWith(`${basePath}/`)) return undefined;
  url.pathname = url.pathname.slice(basePath.length);
  return { url, mountPath: basePath };
}

/** Sends one of the page's files, to GET or HEAD only. */
async function answerAsset(req: IncomingMessage, res: ServerResponse, pathname: string) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    throw new ApprovalCenterError(
      'method_not_allowed',
      `${req.method} is not allowed here; use GET`,
    );
  }
  await sendAsset(res, pathname, req.method === 'HEAD');
}
