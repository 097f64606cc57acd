import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createApprovalCenter,
  EventHub,
  FailureLimiter,
  liveSnapshot,
  type Oidc,
  PageSignIns,
  type QuestionsOptions,
  type SignInContext,
} from '@x/approval-center';
import { isLoopback } from '@x/approval-center/http';
import { ASKUSER_ANSWERED_CHANNEL, ASKUSER_CREATED_CHANNEL } from '@x/askuser';
import { type Claim, type LeasePolicy, policyVersions, type QuestionPolicy } from '@x/executive';
import { leasePolicyFromEnv, questionPolicyFromEnv } from '../config/executive-policy.js';
import { OPTION_DEFAULTS, VARIABLES } from '../config/index.js';
import { demoGatedTools } from '../demo/tools.js';
import { RunnerError, usageError } from '../errors.js';
import {
  answerContentProblem,
  DEFAULT_GRACE_MS,
  type ModelFor,
  type Resumed,
  refuseAnswerer,
  runnerPolicyVersions,
  runnerShadowPolicies,
  watching,
} from '../executive/index.js';
import type { Storage } from '../storage/index.js';
import { sqlSignInStore } from '../storage/sign-ins.js';
import { forgetServing } from '../storage/via-serve.js';
import { osUserName } from '../terminal/os-user.js';
import type { HostedCommandRunner } from './api-cli.js';
import { channelsOf } from './channels.js';
import { type ConnectionLimits, createApiServer, DEFAULT_LIMITS } from './connections.js';
import { type HostedWake, startHostedWake } from './hosted-wake.js';
import { toHttpError } from './http-error.js';
import { fromLocalSocket, type LocalSocket, listenLocal } from './local-socket.js';
import { RunnerMetrics } from './metrics.js';
import { runnerQuestionFlows } from './question-flows.js';
import { runnerRoutes } from './router.js';

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
} from '@x/approval-center';
export type { ConnectionLimits } from './connections.js';
export { listenMetrics, type MetricsListener, RunnerMetrics } from './metrics.js';
export { oidcSettings } from './oidc-settings.js';

/** Options of {@link startServe}. */
interface ServeOptions {
  /** Address to bind; default `127.0.0.1`. Anything but loopback needs `token` or operators. */
  host?: string;
  /** Port; `0` picks a free one (read it from the returned `url`). Default 4319. */
  port?: number;
  /**
   * A shared token every request may present instead of an operator's key (Bearer header,
   * or the page's sign-in form); it signs in as an admin named `operator`.
   */
  token?: string | undefined;
  /** Who answers with the shared token or, without operators, on loopback; recorded with each answer. */
  operator?: string | null | undefined;
  /**
   * The address people open the page at, when a TLS proxy sits in front: an `https://` one
   * marks the session cookie `Secure` (and names it `__Host-runner_session`).
   */
  publicUrl?: string | undefined;
  /** How long a page session lasts from sign-in, in ms; default RUNNER_SESSION_TTL (8 h). */
  sessionTtlMs?: number;
  /** Failed sign-ins from one address within the window before 429; default RUNNER_SIGN_IN_FAILURES. */
  signInFailures?: number;
  /** Failed sign-ins as one operator within the window before 429; default RUNNER_SIGN_IN_FAILURES_PER_NAME. */
  signInFailuresPerName?: number;
  /** The window failed sign-ins are counted in, in ms; default RUNNER_SIGN_IN_WINDOW (15 min). */
  signInWindowMs?: number;
  /**
   * An OpenID Connect provider whose users sign in (bearer JWTs, and the page through
   * `/auth/oidc/login`): `await Oidc.discover(oidcSettings())`.
   */
  oidc?: Oidc | undefined;
  /**
   * How the server bounds its connections: at most `maxConnections` open (more are answered
   * 503), the headers, body and idle timeouts, and the proxies trusted to name the client.
   * Each one not given takes its RUNNER_* variable's default.
   */
  limits?: Partial<ConnectionLimits>;
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
  /** The policy the questions of runs started or resumed here are asked under; default the environment's. */
  questionPolicy?: QuestionPolicy;
  /** The hosted wake loop's lease and retries; default the environment's. */
  lease?: LeasePolicy;
  /** The hosted wake loop claimed a run, before its turn runs (`runner wake`'s `run-claimed`). */
  onClaimed?: ((claimed: Claim) => void) | undefined;
  /** A run was resumed by the hosted wake loop. */
  onResumed?: (resumed: Resumed) => void;
  /** Something went wrong in the background (a resume, the database, a request). */
  onError?: (message: string) => void;
  /**
   * Runs a `runner` command that another process sent over the data folder's socket (the
   * embedded default only; without it, the socket serves the API alone).
   */
  runHostedCommand?: HostedCommandRunner;
}

/** A running approval center. */
export interface ServeHandle {
  /** Where it listens, e.g. `http://127.0.0.1:4319/`. */
  readonly url: string;
  /**
   * On the embedded default, the socket in the data folder that serves the same API to its
   * owner (and commands of other processes), or why there is none.
   */
  readonly socket?: LocalSocket;
  /** Its metrics (served to admins at `/metrics`), this process's executive telemetry while it runs. */
  readonly metrics: RunnerMetrics;
  /**
   * Stops gracefully: no new connection or claim; requests and resumes in flight get the
   * grace to finish, then resumes are cut (their leases released) and connections closed.
   */
  close(): Promise<void>;
}

/**
 * Throws a usage error when `host` is not loopback and there is neither a token nor a way to
 * sign in (a live operator, an identity provider): the server refuses to start rather than
 * expose unauthenticated answers.
 */
function assertServeAllowed(host: string, token: string | undefined, signsIn: boolean): void {
  if (!isLoopback(host) && !token && !signsIn) {
    throw usageError(
      `binding ${host} exposes the approval center beyond this machine: add an operator first (runner operators add NAME --role admin) and sign in with the key it prints, or give --token TOKEN (or RUNNER_TOKEN), or bind 127.0.0.1`,
    );
  }
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
  const token = options.token || undefined;
  const { oidc } = options;
  assertServeAllowed(host, token, oidc !== undefined || (await storage.operators().anyLive()));
  const onError = options.onError ?? (() => {});
  const questionPolicy = options.questionPolicy ?? questionPolicyFromEnv();
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const shown = { storage, gatedTools: demoGatedTools };
  const hub = new EventHub({
    snapshot: () => liveSnapshot(shown),
    // On PostgreSQL, NOTIFY covers new and answered questions; the poll finds runs
    // finished by other processes.
    pollMs: storage.kind === 'postgres' ? 1_000 : 2_000,
    onError: (error) => onError(`event feed: ${(error as Error)?.message ?? error}`),
  });
  let hostedWake: HostedWake | undefined;
  const metrics = new RunnerMetrics(() => storage);
  const watchedBefore = watching.telemetry;
  watching.telemetry = metrics;
  const windowMs = options.signInWindowMs ?? VARIABLES.RUNNER_SIGN_IN_WINDOW.default;
  const signIn: SignInContext = {
    operators: storage.operators(),
    audit: storage,
    token,
    operator: options.operator ?? null,
    oidc,
    sessions: new PageSignIns(sqlSignInStore(storage.db), {
      ttlMs: options.sessionTtlMs ?? VARIABLES.RUNNER_SESSION_TTL.default,
      secure: options.publicUrl?.startsWith('https:') ?? false,
      token,
      cookieName: 'runner_session',
    }),
    signedOut: () => void hub.recheck(),
    // Only the data folder's owner can open its socket: they administer it, as the CLI does.
    hostAdmin: (req) => (fromLocalSocket(req) ? osUserName() : undefined),
    limiters: {
      source: new FailureLimiter({
        max: options.signInFailures ?? VARIABLES.RUNNER_SIGN_IN_FAILURES.default,
        windowMs,
      }),
      name: new FailureLimiter({
        max: options.signInFailuresPerName ?? VARIABLES.RUNNER_SIGN_IN_FAILURES_PER_NAME.default,
        windowMs,
      }),
    },
  };
  const api = {
    storage,
    modelFor: options.modelFor,
    questionPolicy,
    answered() {
      hub.poke();
      hostedWake?.answered();
    },
  };
  const questions: QuestionsOptions = {
    ...shown,
    flows: runnerQuestionFlows(storage),
    hub,
    answered: api.answered,
    contentProblem: answerContentProblem,
    refuseAnswerer,
  };
  const unlisten = await storage.listen?.([ASKUSER_CREATED_CHANNEL, ASKUSER_ANSWERED_CHANNEL], () =>
    hub.poke(),
  );
  let closing = false;
  const stopping = new AbortController();
  const handle = createApprovalCenter({
    loopbackOnly: isLoopback(host),
    routes: runnerRoutes({
      stopping: stopping.signal,
      api,
      signIn,
      runHostedCommand:
        options.runHostedCommand && hostedThenAnswered(options.runHostedCommand, api, hub),
      metrics,
    }),
    // The Policies tab: the set the demo agent's turns decide with now (the newest loaded
    // version, else the configured one), what its rules decided, and the candidate's disagreements.
    policies: {
      active: async () => {
        const versions = runnerPolicyVersions();
        const [newest] = await policyVersions(storage.db, 1);
        await versions.follow(storage.db, newest ?? null);
        return versions.policies;
      },
      db: storage.db,
      shadow: runnerShadowPolicies() !== undefined,
    },
    oidc: oidc && {
      provider: oidc,
      sessions: signIn.sessions,
      limiters: signIn.limiters,
      audit: storage,
      stateCookieName: 'runner_oidc_state',
    },
    channels: channelsOf(storage, api.answered),
    questions,
    classifyError: toHttpError,
    onError,
    onClose: () => hub.close(),
  });
  const server = createApiServer({ ...DEFAULT_LIMITS, ...options.limits }, (req, res) => {
    // While closing, a keep-alive connection is closed as soon as its response is sent.
    res.once('finish', () => {
      if (closing) server.closeIdleConnections();
    });
    handle(req, res);
  });
  const port = options.port ?? OPTION_DEFAULTS.port;
  try {
    await listen(server, port, host);
  } catch (error) {
    // The feed already runs: stopped before the storage closes under it.
    await handle.close();
    await unlisten?.();
    watching.telemetry = watchedBefore;
    throw listenError(error, host, port);
  }
  // Only once the port is bound: a server that cannot serve resumes nothing.
  if (options.wake !== false) {
    hostedWake = startHostedWake(storage, {
      hub,
      graceMs,
      modelFor: options.modelFor,
      lease: options.lease ?? leasePolicyFromEnv(),
      questionPolicy,
      onClaimed: options.onClaimed,
      onResumed: options.onResumed,
      onError,
    });
  }
  // PGlite is this process's: other processes reach it through the folder's socket.
  const socket =
    storage.kind === 'embedded'
      ? await listenLocal(storage.where, handle, options.wake !== false)
      : undefined;

  return {
    url: urlOf(server),
    ...(socket ? { socket } : {}),
    metrics,
    async close() {
      const wakeStopped = hostedWake?.stop();
      closing = true;
      stopping.abort();
      await handle.close();
      await Promise.all([
        closeServer(server, graceMs),
        socket && 'server' in socket ? closeServer(socket.server, graceMs) : undefined,
      ]);
      if (socket && 'server' in socket) forgetServing(storage.where);
      await wakeStopped;
      await unlisten?.();
      watching.telemetry = watchedBefore;
    },
  };
}

/**
 * A command of another process may have answered or stopped: the feed and wake look again.
 * It may have revoked or rotated an operator too: open streams check their credentials.
 */
function hostedThenAnswered(
  host: HostedCommandRunner,
  api: { answered(): void },
  hub: EventHub,
): HostedCommandRunner {
  return async (command, sinks) => {
    try {
      return await host(command, sinks);
    } finally {
      api.answered();
      void hub.recheck();
    }
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Where a listening server is reached, e.g. `http://[::1]:4319/`. */
function urlOf(server: Server): string {
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${shown}:${address.port}/`;
}

/** Stops accepting; the requests in flight get `graceMs`, then their connections are cut. */
async function closeServer(server: Server, graceMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const cut = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearTimeout(cut);
}
