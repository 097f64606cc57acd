import { randomUUID } from 'node:crypto';
import { PostgresCheckpointStore } from '@x/session-postgres';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { connectTimeoutOf, describeUrl, parseDatabaseUrl } from '../config/database-url.js';
import { type Env, setting, VARIABLES } from '../config/index.js';
import { postgresCause, RunnerError } from '../errors.js';
import { holdLeaseLock, type LeaseHolderLock } from './lease-holder.js';
import { probeServer } from './postgres-probe.js';
import { type AuditHolder, type Db, type Storage, sqlStores } from './stores.js';

/**
 * Makes the first connection within `seconds`, or ends the client and says in one line why
 * not: the server is not PostgreSQL (postgres.js would reconnect to it forever), offers no
 * TLS the URL asks for, refuses, or does not finish the start-up in time.
 */
async function reachPostgres(client: postgres.Sql, seconds: number, where: string): Promise<void> {
  const unusable = (cause: string, error?: unknown) =>
    new RunnerError('unavailable', `cannot use PostgreSQL at ${where}: ${cause}`, { cause: error });
  const { host, port, path: socketPath, ssl } = client.options;
  let timer: NodeJS.Timeout | undefined;
  // The first connection starts beside the probe, which only explains a failure: a start-up
  // after the probe would add its round trips to every command.
  const first = client`select 1`;
  first.catch(() => {});
  try {
    const started = Date.now();
    const probe = await probeServer({
      host: host[0],
      port: port[0],
      path: socketPath || undefined,
      timeoutMs: seconds * 1000,
    });
    if (!probe.postgres) throw unusable(probe.problem ?? 'it does not answer as PostgreSQL does');
    if (!probe.tls && ssl && ssl !== 'prefer') {
      throw unusable(
        `the server does not support TLS, which sslmode=${typeof ssl === 'string' ? ssl : 'require'} asks for (drop sslmode from the URL, or turn on ssl in the server)`,
      );
    }
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            unusable(
              `the server did not finish the start-up within ${seconds} s (connect_timeout)`,
            ),
          ),
        Math.max(0, started + seconds * 1000 - Date.now()),
      );
    });
    await Promise.race([first, late]);
  } catch (error) {
    await client.end({ timeout: 0 }).catch(() => {});
    if (RunnerError.is(error)) throw error;
    const cause = postgresCause(error);
    throw cause === undefined ? error : unusable(cause, error);
  } finally {
    clearTimeout(timer);
  }
}

/** How the runner reaches PostgreSQL, from DATABASE_URL and the environment. */
interface PostgresTarget {
  /** DATABASE_URL without the runner's own parameters. */
  url: string;
  /** `?pgbouncer=true`: a pooler in transaction mode (no prepared statements, no LISTEN). */
  pooled: boolean;
  /** A direct connection for LISTEN/NOTIFY (RUNNER_LISTEN_URL), when pooled. */
  listenUrl: string | undefined;
  /** Connections in the pool (RUNNER_DB_POOL, default 10). */
  poolSize: number;
  /** Seconds a command waits to reach the server (connect_timeout, PGCONNECT_TIMEOUT, default 10). */
  connectTimeoutS: number;
}

/** Reads DATABASE_URL's `pgbouncer=true`, RUNNER_LISTEN_URL and RUNNER_DB_POOL. */
function postgresTarget(databaseUrl: string, env?: Env): PostgresTarget {
  const url = parseDatabaseUrl('DATABASE_URL', databaseUrl);
  const listenUrl = setting(VARIABLES.RUNNER_LISTEN_URL, env);
  const pooled = url.searchParams.get('pgbouncer') === 'true';
  url.searchParams.delete('pgbouncer');
  return {
    url: url.toString(),
    pooled,
    listenUrl,
    poolSize: setting(VARIABLES.RUNNER_DB_POOL, env),
    connectTimeoutS: connectTimeoutOf(url) ?? setting(VARIABLES.PGCONNECT_TIMEOUT, env),
  };
}

/** Opens PostgreSQL at `databaseUrl` (directly or through a pooler), with LISTEN where it can. */
export async function openPostgres(databaseUrl: string, audit: AuditHolder): Promise<Storage> {
  const target = postgresTarget(databaseUrl);
  // Behind a transaction-mode pooler a named statement prepared on one server connection is
  // missing on the next: every statement goes unprepared.
  // Names this process's connections, so that the pool's use can be read in pg_stat_activity
  // (unless the URL or PGAPPNAME names them: then the gauge counts every pool of that name).
  const named =
    new URL(target.url).searchParams.get('application_name') || setting(VARIABLES.PGAPPNAME);
  const applicationName = named || `runner ${process.pid} ${randomUUID().slice(0, 8)}`;
  const client = postgres(target.url, {
    onnotice: () => {},
    max: target.poolSize,
    ...(target.pooled || named ? {} : { connection: { application_name: applicationName } }),
    connect_timeout: target.connectTimeoutS,
    ...(target.pooled ? { prepare: false } : {}),
  });
  const where = describeUrl(target.url) + (target.pooled ? ' (through a pooler)' : '');
  await reachPostgres(client, target.connectTimeoutS, where);
  const db = drizzlePostgres({ client }) as unknown as Db;
  const stores = sqlStores(db, audit);
  // LISTEN needs a session of its own, which a transaction-mode pooler does not keep.
  const listenUrl = target.pooled ? target.listenUrl : target.url;
  // So does the lease-holder lock: the same direct connection's URL.
  let holderLock: LeaseHolderLock | undefined;
  return {
    kind: 'postgres',
    where,
    pooled: target.pooled,
    ...stores,
    async leaseHolder() {
      if (listenUrl === undefined) return undefined;
      holderLock ??= holdLeaseLock(listenUrl);
      return holderLock.key();
    },
    ...(target.pooled
      ? {}
      : {
          async poolUse() {
            const [row] = await client<{ busy: number }[]>`select count(*)::int as busy
              from pg_stat_activity where application_name = ${applicationName}
              and state <> 'idle' and pid <> pg_backend_pid()`;
            return { inUse: Number(row?.busy ?? 0), size: target.poolSize };
          },
        }),
    chatContinuations: () => stores.continuations(),
    checkpoints: new PostgresCheckpointStore(db),
    ...(listenUrl === undefined
      ? {}
      : {
          async listen(channels: readonly string[], onNotify: () => void) {
            const listener =
              listenUrl === target.url
                ? client
                : postgres(listenUrl, {
                    onnotice: () => {},
                    max: 1,
                    connect_timeout: target.connectTimeoutS,
                  });
            if (listener !== client) {
              await reachPostgres(listener, target.connectTimeoutS, describeUrl(listenUrl));
            }
            const subscriptions: Array<{ unlisten(): Promise<void> }> = [];
            for (const channel of channels) {
              subscriptions.push(await listener.listen(channel, () => onNotify()));
            }
            return async () => {
              for (const subscription of subscriptions) await subscription.unlisten();
              if (listener !== client) await listener.end({ timeout: 5 });
            };
          },
        }),
    async close() {
      await Promise.all([client.end({ timeout: 5 }), holderLock?.close()]);
    },
  };
}
