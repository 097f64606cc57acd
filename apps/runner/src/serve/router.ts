import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkCsrf } from '@x/approval-center';
import { type ApiContext, handleApi } from './api.js';
import { answerHostedCommand, type HostedCommandRunner } from './api-cli.js';
import { callerOf, handleSignIn, requireAdmin, type SignIn } from './auth.js';
import { answerDecisionRoute } from './decide.js';
import { checkHost, checkSingleHeaders, sendError } from './http.js';
import { HttpError, toHttpError } from './http-error.js';
import type { RunnerMetrics } from './metrics.js';
import { answerOidcRoute } from './oidc-routes.js';
import { answerSlackRoute } from './slack-actions.js';
import { isAsset, sendAsset } from './static.js';

/** What {@link routeRequests} needs to answer a request. */
interface RouteContext {
  /** The API's context but the caller, whom each request names. */
  api: Omit<ApiContext, 'caller'>;
  /** Who may come in: the shared token, the operators' keys and their sessions, or the one local operator. */
  signIn: SignIn;
  /** Bound to loopback: the Host header must name this machine. */
  loopback: boolean;
  /** An unexpected error answering a request. */
  onError: (message: string) => void;
  /** Runs a command sent over the data folder's socket (`POST /api/cli`). */
  runHostedCommand?: HostedCommandRunner | undefined;
  /** Aborted when the server starts to stop: interactive commands' input ends then. */
  stopping?: AbortSignal;
  /** Served at `GET /metrics` to admins. */
  metrics?: RunnerMetrics | undefined;
}

/**
 * The approval center's request handler: checks the host, serves the page's files (which
 * hold no data) and the sign-in routes to anyone, then checks who is calling (and, for a
 * write by the page's session, its CSRF token) and answers the API under `/api`, or 404;
 * every error becomes one JSON answer.
 */
export function routeRequests(
  context: RouteContext,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { api, signIn, loopback, onError, runHostedCommand, stopping, metrics } = context;
  return async (req, res) => {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      checkSingleHeaders(req);
      if (loopback) checkHost(req);
      if (isAsset(url.pathname)) {
        await answerAsset(req, res, url.pathname);
        return;
      }
      if (await handleSignIn(signIn, req, res, url.pathname)) return;
      // A decision link is its own credential: signed, for one answer by one person, once.
      if (await answerDecisionRoute(api.storage, api.answered, req, res, url)) return;
      // Slack's requests are signed by Slack; the user is mapped to an operator.
      if (await answerSlackRoute(api.storage, api.answered, req, res, url)) return;
      if (signIn.oidc && (await answerOidcRoute({ ...signIn, oidc: signIn.oidc }, req, res, url))) {
        return;
      }
      const caller = await callerOf(signIn, req);
      if (req.method === 'POST' && url.pathname === '/api/cli') {
        await answerHostedCommand(runHostedCommand, req, res, stopping);
        return;
      }
      if (
        metrics &&
        url.pathname === '/metrics' &&
        (req.method === 'GET' || req.method === 'HEAD')
      ) {
        requireAdmin(caller, 'read the metrics');
        await metrics.send(res, req.method === 'HEAD');
        return;
      }
      if (caller.session && req.method !== 'GET' && req.method !== 'HEAD') {
        checkCsrf(req, caller.session);
      }
      if (url.pathname.startsWith('/api/')) {
        await handleApi({ ...api, caller }, req, res, url);
        return;
      }
      throw new HttpError(404, 'not_found', `nothing at ${url.pathname}`);
    } catch (caught) {
      const { error, unexpected } = toHttpError(caught);
      if (unexpected) onError(`${req.method} ${req.url}: ${(caught as Error)?.message ?? caught}`);
      sendError(res, error);
    }
  };
}

/** Sends one of the page's files, to GET or HEAD only. */
async function answerAsset(req: IncomingMessage, res: ServerResponse, pathname: string) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    throw new HttpError(405, 'method_not_allowed', `${req.method} is not allowed here; use GET`);
  }
  await sendAsset(res, pathname, req.method === 'HEAD');
}
