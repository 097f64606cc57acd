import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ASKUSER_ANSWERED_CHANNEL, ASKUSER_CREATED_CHANNEL } from '@x/askuser';
import { OPTION_DEFAULTS } from '../config/index.js';
import { classifyFailure, RunnerError, usageError } from '../errors.js';
import {
  DEFAULT_GRACE_MS,
  leasePolicyFromEnv,
  type ModelFor,
  type Resumed,
  wake,
} from '../executive/index.js';
import type { Storage } from '../storage/index.js';
import { type ApiContext, handleApi } from './api.js';
import { acceptsKey, callerOf, type SignIn } from './auth.js';
import { EventHub } from './events.js';
import {
  checkHost,
  isLoopback,
  sendError,
  sendSignInPage,
  TOKEN_COOKIE,
  wantsPage,
} from './http.js';
import { HttpError } from './http-error.js';
import { isAsset, sendAsset } from './static.js';

// The API's shapes are declared once, beside the page that reads them.
export type {
  ContextView,
  MessageView,
  PauseStatus,
  PauseView,
  PriorityLabel,
  RecentView,
  RunOutcome,
  RunView,
  ServeEvent,
  SourceView,
  ToolCallView,
} from '../../web/src/api-types.d.ts';
export { MAX_BODY_BYTES } from './http.js';
export { HttpError, type HttpErrorCode } from './http-error.js';

/** Options of {@link startServe}. */
export interface ServeOptions {
  /** Address to bind; default `127.0.0.1`. Anything but loopback needs `token` or operators. */
  host?: string;
  /** Port; `0` picks a free one (read it from the returned `url`). Default 4319. */
  port?: number;
  /**
   * A shared token every request may present instead of an operator's key (Bearer header,
   * or the page's cookie); it signs in as an admin named `operator`.
   */
  token?: string | undefined;
  /** Who answers with the shared token or, without operators, on loopback; recorded with each answer. */
  operator?: string | null | undefined;
  /** Host the wake loop in this process (default true): one process owns PGlite. */
  wake?: boolean;
  /**
   * How long {@link ServeHandle.close} lets the hosted wake's turns and the requests in
   * flight finish; then turns are cut (their leases released) and connections closed.
   * Default 30 s.
   */
  graceMs?: number;
  /** The model for a resumed run (from its saved model id). */
  modelFor: ModelFor;
  /** A run was resumed by the hosted wake loop. */
  onResumed?: (resumed: Resumed) => void;
  /** Something went wrong in the background (a resume, the database, a request). */
  onError?: (message: string) => void;
}

/** A running approval center. */
export interface ServeHandle {
  /** Where it listens, e.g. `http://127.0.0.1:4319/`. */
  readonly url: string;
  /**
   * Stops gracefully: no new connection or claim; requests and resumes in flight get the
   * grace to finish, then resumes are cut (their leases released) and connections closed.
   */
  close(): Promise<void>;
}

/**
 * Throws a usage error when `host` is not loopback and there is neither a token nor a live
 * operator: the server refuses to start rather than expose unauthenticated answers.
 */
export function assertServeAllowed(
  host: string,
  token: string | undefined,
  hasOperators: boolean,
): void {
  if (!isLoopback(host) && !token && !hasOperators) {
    throw usageError(
      `binding ${host} exposes the approval center beyond this machine: add an operator first (runner operators add NAME --role admin) and sign in with the key it prints, or give --token TOKEN (or RUNNER_TOKEN), or bind 127.0.0.1`,
    );
  }
}

function toHttpError(error: unknown): { error: HttpError; unexpected: boolean } {
  if (HttpError.is(error)) return { error, unexpected: false };
  // The runner's and the packages' typed errors answer as the CLI does (one classifier).
  const failure = classifyFailure(error);
  return {
    error: new HttpError(
      failure.httpStatus,
      failure.httpCode,
      failure.httpMessage,
      undefined,
      error,
    ),
    unexpected: failure.internal,
  };
}

/** Why the server cannot listen, in one line: a busy port, an address not of this machine. */
function listenError(error: unknown, host: string, port: number): unknown {
  const where = `${host}:${port}`;
  switch ((error as { code?: string })?.code) {
    case 'EADDRINUSE':
      return new RunnerError(
        'unavailable',
        `port ${port} on ${host} is in use: stop what listens there, or give another --port (0 picks a free one)`,
        { cause: error },
      );
    case 'EACCES':
      return new RunnerError(
        'unavailable',
        `not allowed to listen on ${where} (ports below 1024 need privileges): give another --port`,
        { cause: error },
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return usageError(`--host ${host} is not an address of this machine`);
    default:
      return error;
  }
}

/**
 * Starts the approval center: the JSON API under `/api`, the live event feed, the page at
 * `/`, and (unless `wake: false`) the wake loop that resumes answered runs.
 *
 * @example
 * const storage = await openStorage({ dataDir: '.runner', command: 'serve', log: console.log });
 * const server = await startServe(storage, { port: 0, modelFor: modelFromId });
 * console.log(`open ${server.url}`);
 * // ... later
 * await server.close();
 * await storage.close();
 */
export async function startServe(storage: Storage, options: ServeOptions): Promise<ServeHandle> {
  const host = options.host ?? OPTION_DEFAULTS.host;
  const loopback = isLoopback(host);
  const token = options.token || undefined;
  assertServeAllowed(host, token, await storage.operators().anyLive());
  const onError = options.onError ?? (() => {});
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const hub = new EventHub({
    storage,
    // On PostgreSQL, NOTIFY covers new and answered questions; the poll finds runs
    // finished by other processes.
    pollMs: storage.kind === 'postgres' ? 1_000 : 2_000,
    onError: (error) => onError(`event feed: ${(error as Error)?.message ?? error}`),
  });
  const localAnswered = new Set<() => void>();
  const signIn: SignIn = { storage, token, operator: options.operator ?? null };
  const api: Omit<ApiContext, 'caller'> = {
    storage,
    hub,
    answered() {
      hub.poke();
      for (const listener of localAnswered) listener();
    },
  };

  const unlisten = await storage.listen?.([ASKUSER_CREATED_CHANNEL, ASKUSER_ANSWERED_CHANNEL], () =>
    hub.poke(),
  );

  let stopWake: () => void = () => {};
  let wakeLoop: Promise<unknown> = Promise.resolve();
  if (options.wake !== false) {
    // Embedded: no other process can answer, so this server's own writes wake the loop.
    const wakeStorage: Storage =
      storage.listen !== undefined
        ? storage
        : {
            ...storage,
            async listen(_channels, onNotify) {
              localAnswered.add(onNotify);
              return async () => {
                localAnswered.delete(onNotify);
              };
            },
          };
    const stopped = new Promise<void>((resolve) => {
      stopWake = resolve;
    });
    wakeLoop = wake(wakeStorage, {
      once: false,
      // Several runs resume side by side: no transaction is held while a model runs.
      concurrency: 4,
      pollMs: storage.kind === 'postgres' ? 5_000 : 1_000,
      policy: leasePolicyFromEnv(),
      modelFor: options.modelFor,
      observerFor: () => ({ event: () => {} }),
      onResumed: (resumed) => {
        hub.poke();
        options.onResumed?.(resumed);
      },
      onUnavailable: (error, wait) =>
        onError(
          `database unavailable (${(error as Error)?.message ?? error}); retrying in ${Math.round(wait / 1000)}s`,
        ),
      stop: stopped,
      graceMs,
    }).catch((error) => onError(`wake loop stopped: ${(error as Error)?.message ?? error}`));
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (loopback) checkHost(req);
      const given = url.searchParams.get('token');
      if (req.method === 'GET' && url.pathname === '/' && given !== null) {
        // Signs the browser in once: the key moves into an HttpOnly cookie and out of the
        // address bar (and history).
        if (!(await acceptsKey(signIn, given))) {
          throw new HttpError(
            401,
            'unauthorized',
            "this key is not the server's token nor a live operator's",
          );
        }
        res.writeHead(303, {
          location: '/',
          'set-cookie': `${TOKEN_COOKIE}=${encodeURIComponent(given)}; HttpOnly; SameSite=Strict; Path=/`,
          'cache-control': 'no-store',
        });
        res.end();
        return;
      }
      const caller = await callerOf(signIn, req);
      if (url.pathname.startsWith('/api/')) {
        await handleApi({ ...api, caller }, req, res, url);
        return;
      }
      if (isAsset(url.pathname)) {
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          res.setHeader('allow', 'GET, HEAD');
          throw new HttpError(
            405,
            'method_not_allowed',
            `${req.method} is not allowed here; use GET`,
          );
        }
        await sendAsset(res, url.pathname, req.method === 'HEAD');
        return;
      }
      throw new HttpError(404, 'not_found', `nothing at ${url.pathname}`);
    } catch (caught) {
      const { error, unexpected } = toHttpError(caught);
      if (unexpected) onError(`${req.method} ${req.url}: ${(caught as Error)?.message ?? caught}`);
      const page = error.status === 401 && !req.url?.startsWith('/api/') && wantsPage(req);
      if (page) sendSignInPage(res, error);
      else sendError(res, error);
    }
  };

  let closing = false;
  const server = createServer((req, res) => {
    // While closing, a keep-alive connection is closed as soon as its response is sent.
    res.once('finish', () => {
      if (closing) server.closeIdleConnections();
    });
    void handle(req, res);
  });
  const port = options.port ?? OPTION_DEFAULTS.port;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    // The wake loop and the feed already run: stopped before the storage closes under them.
    stopWake();
    await hub.close();
    await wakeLoop;
    await unlisten?.();
    throw listenError(error, host, port);
  }
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${shown}:${address.port}/`,
    async close() {
      stopWake();
      closing = true;
      await hub.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const cut = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(cut);
      await wakeLoop;
      await unlisten?.();
    },
  };
}
