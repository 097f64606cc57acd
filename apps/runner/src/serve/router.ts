import {
  type CenterRoutes,
  callerOf,
  checkCsrf,
  handleSignIn,
  requireAdmin,
  type SignInContext,
} from '@x/approval-center';
import { type ApiContext, handleApi } from './api.js';
import { answerHostedCommand, type HostedCommandRunner } from './api-cli.js';
import type { RunnerMetrics } from './metrics.js';

/** What {@link runnerRoutes} needs to answer a request. */
interface RouteContext {
  /** The runner's API routes' context but the caller, whom each request names. */
  api: Omit<ApiContext, 'caller'> & {
    /** Called after a write that may have answered questions (the feed and the wake loop look again). */
    answered(): void;
  };
  /** Who may come in: the shared token, the operators' keys and their sessions, or the one local operator. */
  signIn: SignInContext;
  /** Runs a command sent over the data folder's socket (`POST /api/cli`). */
  runHostedCommand?: HostedCommandRunner | undefined;
  /** Aborted when the server starts to stop: interactive commands' input ends then. */
  stopping?: AbortSignal;
  /** Served at `GET /metrics` to admins. */
  metrics?: RunnerMetrics | undefined;
}

/**
 * The routes the runner still serves inside the approval center (which serves the page's
 * files itself): the sign-in routes to anyone, then it checks who is calling (and, for a
 * write by the page's session, its CSRF token) and answers the API under `/api`.
 */
export function runnerRoutes(context: RouteContext): CenterRoutes {
  const { api, signIn, runHostedCommand, stopping, metrics } = context;
  return async (req, res, url, request) => {
    if (await handleSignIn(signIn, req, res, url.pathname, request)) return true;
    const caller = await callerOf(signIn, req, request);
    if (req.method === 'POST' && url.pathname === '/api/cli') {
      await answerHostedCommand(runHostedCommand, req, res, stopping);
      return true;
    }
    if (metrics && url.pathname === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) {
      requireAdmin(caller, 'read the metrics');
      await metrics.send(res, req.method === 'HEAD');
      return true;
    }
    if (caller.session && req.method !== 'GET' && req.method !== 'HEAD') {
      checkCsrf(req, caller.session);
    }
    if (url.pathname.startsWith('/api/')) {
      // The center's own routes (the question API, GET /api/policies), to anyone signed in.
      if (await request.ownRoutes(caller)) return true;
      await handleApi({ ...api, caller }, req, res, url);
      return true;
    }
    return false;
  };
}
