import { parseArgs } from 'node:util';
import { OPTION_DEFAULTS, setting, VARIABLES, type Variable } from '../config/index.js';
import { usageError } from '../errors.js';
import { modelFromId } from '../model/index.js';
import type { HostedCommandRunner } from '../serve/api-cli.js';
import type { ConnectionLimits } from '../serve/connections.js';
import { osUserName } from '../terminal/os-user.js';
import { type Command, globalOptions, withStorage } from './command.js';
import {
  metricsAddress,
  metricsOptions,
  parseGrace,
  reportClaimed,
  reportResumed,
  startMetrics,
  stopOnSignals,
} from './wake.js';

/** `runner serve`: the approval center, and (unless --no-wake) the wake loop; stops gracefully. */
export const serve: Command = async (ctx, args) => {
  const { values } = parseArgs({
    args,
    options: {
      ...globalOptions,
      host: { type: 'string' },
      port: { type: 'string' },
      token: { type: 'string' },
      'no-wake': { type: 'boolean' },
      operator: { type: 'string' },
      'public-url': { type: 'string' },
      grace: { type: 'string' },
      'max-connections': { type: 'string' },
      'headers-timeout': { type: 'string' },
      'body-timeout': { type: 'string' },
      'idle-timeout': { type: 'string' },
      'trust-proxy': { type: 'string' },
      ...metricsOptions,
    },
  });
  const metricsAt = metricsAddress(values);
  const limits = connectionLimits(values);
  const port = Number(values.port ?? OPTION_DEFAULTS.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw usageError('--port takes a number from 0 to 65535');
  const host = values.host ?? OPTION_DEFAULTS.host;
  const token = values.token ?? setting(VARIABLES.RUNNER_TOKEN);
  const publicUrl = values['public-url'] ?? setting(VARIABLES.RUNNER_PUBLIC_URL);
  if (
    publicUrl !== undefined &&
    VARIABLES.RUNNER_PUBLIC_URL.kind.parse(publicUrl, '') === undefined
  )
    throw usageError(`--public-url takes an http:// or https:// URL, not "${publicUrl}"`);
  const { oidcSettings, startServe } = await import('../serve/index.js');
  const { Oidc } = await import('@x/approval-center');
  const settings = oidcSettings(process.env, publicUrl);
  // Before the storage opens: a provider that cannot be found stops the start at once.
  const oidc = settings && (await Oidc.discover(settings));
  const graceMs = parseGrace(values.grace);
  // Before the storage opens: a signal while it opens closes the server as soon as it is up.
  const stop = stopOnSignals(ctx.out, graceMs);
  const operator = values.operator || setting(VARIABLES.RUNNER_OPERATOR) || osUserName();
  return withStorage(ctx, async (storage) => {
    const runHere = ctx.hostedCommandRunner?.(storage);
    // The log says which commands of other terminals ran here, as they start.
    const hosted: HostedCommandRunner | undefined =
      runHere &&
      ((request, sinks) => {
        ctx.out.record(
          { type: 'hosted', command: request.argv[0] },
          `running \`${request.argv[0]}\` for another terminal`,
        );
        return runHere(request, sinks);
      });
    const server = await startServe(storage, {
      host,
      port,
      token,
      operator,
      publicUrl,
      sessionTtlMs: setting(VARIABLES.RUNNER_SESSION_TTL),
      signInFailures: setting(VARIABLES.RUNNER_SIGN_IN_FAILURES),
      signInFailuresPerName: setting(VARIABLES.RUNNER_SIGN_IN_FAILURES_PER_NAME),
      signInWindowMs: setting(VARIABLES.RUNNER_SIGN_IN_WINDOW),
      oidc,
      limits,
      wake: !values['no-wake'],
      graceMs,
      modelFor: (id) => modelFromId(id || ctx.modelId),
      onClaimed: (claimed) => reportClaimed(ctx.out, claimed),
      onResumed: (resumed) => reportResumed(ctx.out, resumed, true),
      onError: (line) => ctx.out.error(line),
      ...(hosted ? { runHostedCommand: hosted } : {}),
    });
    const socket = server.socket && 'path' in server.socket ? server.socket.path : undefined;
    // Who may come in, said once: keys, the shared token, or the one local operator.
    const keys = await storage.operators().anyLive();
    const signIn = keys ? 'key' : token ? 'token' : oidc ? 'oidc' : 'none';
    // People reach the page at the public URL (behind a proxy); the listener's address is ours.
    const pageUrl =
      publicUrl === undefined ? server.url : publicUrl.endsWith('/') ? publicUrl : `${publicUrl}/`;
    const listeningOn = pageUrl === server.url ? '' : `listening on ${server.url}, `;
    ctx.out.record(
      {
        type: 'listening',
        url: server.url,
        ...(publicUrl === undefined ? {} : { publicUrl: pageUrl }),
        where: storage.where,
        wake: !values['no-wake'],
        signIn,
        ...(socket ? { socket } : {}),
      },
      `approval center on ${pageUrl} (${listeningOn}${storage.where}${values['no-wake'] ? '' : ', resuming answered runs'}); Ctrl-C to stop` +
        (signIn === 'none'
          ? `\nno operators: it answers as ${operator ?? 'the local operator'}, without a key, on this machine only (${ctx.out.command('operators add NAME')} adds one)`
          : `\nsign in on the page with ${keys ? "an operator's key" : token ? 'the token' : 'your identity provider'}${settings?.clientId ? ` (${pageUrl}auth/oidc/login)` : ''}; scripts send "Authorization: Bearer KEY"${oidc ? ' or a JWT of the identity provider' : ''}`) +
        (socket ? `\ncommands of other terminals on this folder go through ${socket}` : ''),
    );
    if (server.socket && 'skipped' in server.socket) {
      ctx.out.note(`no socket for other terminals: ${server.socket.skipped}`);
    }
    const metricsListener =
      metricsAt &&
      (await startMetrics(ctx.out, server.metrics, metricsAt).catch(async (error: unknown) => {
        await server.close();
        throw error;
      }));
    await stop.requested;
    await server.close();
    await metricsListener?.close();
    return 0;
  }).finally(() => stop.dispose());
};

/** A flag's value as `variable`'s kind takes it, else the variable's setting. */
function flagOr<T, D extends T | undefined>(
  given: string | undefined,
  flag: string,
  variable: Variable<T, D>,
): T | D {
  if (given === undefined) return setting(variable);
  const value = variable.kind.parse(given, flag);
  if (value === undefined)
    throw usageError(`${flag} takes ${variable.kind.accepts}, not "${given}"`);
  return value;
}

/** `--max-connections`, the timeouts and `--trust-proxy`, each else its RUNNER_* variable. */
function connectionLimits(values: Record<string, unknown>): ConnectionLimits {
  const flag = (name: string) => values[name] as string | undefined;
  return {
    maxConnections: flagOr(
      flag('max-connections'),
      '--max-connections',
      VARIABLES.RUNNER_MAX_CONNECTIONS,
    ),
    headersTimeoutMs: flagOr(
      flag('headers-timeout'),
      '--headers-timeout',
      VARIABLES.RUNNER_HEADERS_TIMEOUT,
    ),
    bodyTimeoutMs: flagOr(flag('body-timeout'), '--body-timeout', VARIABLES.RUNNER_BODY_TIMEOUT),
    idleTimeoutMs: flagOr(flag('idle-timeout'), '--idle-timeout', VARIABLES.RUNNER_IDLE_TIMEOUT),
    trustProxy: flagOr(flag('trust-proxy'), '--trust-proxy', VARIABLES.RUNNER_TRUST_PROXY) ?? [],
  };
}
