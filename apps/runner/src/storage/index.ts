import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import { AskUserStore, migrate as migrateAskUser } from '@x/askuser';
import type { ContinuationStore } from '@x/continuation';
import { FileContinuationStore, sessionDir } from '@x/continuation/file';
import {
  migrate as migrateContinuations,
  PostgresContinuationStore,
  PostgresRunQueue,
  type PostgresRunQueueOptions,
  randomHolderKey,
} from '@x/continuation-postgres';
import type { CheckpointStore } from '@x/session';
import { FileCheckpointStore } from '@x/session/file';
import { migrate as migrateCheckpoints, PostgresCheckpointStore } from '@x/session-postgres';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { connectTimeoutOf, describeUrl, parseDatabaseUrl } from '../config/database-url.js';
import { type Env, setting, VARIABLES } from '../config/index.js';
import { postgresCause, RunnerError } from '../errors.js';
import { lockDataFolder } from './data-lock.js';
import { holdLeaseLock, type LeaseHolderLock } from './lease-holder.js';
import { probeServer } from './postgres-probe.js';

/** A drizzle database or transaction handle, on postgres.js or PGlite. */
export type Db = PgDatabase<PgQueryResultHKT, Record<string, unknown>>;

/** Where the runner keeps its state, and the stores over it. */
export interface Storage {
  readonly kind: 'embedded' | 'postgres';
  /** Reached through a transaction-mode pooler (DATABASE_URL `?pgbouncer=true`). */
  readonly pooled?: boolean;
  /** For messages: the data folder, or the server without credentials. */
  readonly where: string;
  readonly db: Db;
  /** Runs `fn` in one transaction of the database. */
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /** Runs `fn`'s reads in one consistent snapshot (a read-only repeatable-read transaction). */
  snapshot<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /** The pause rows of the unattended executive (`paused_states`). */
  pauses(tx?: Db): AskUserStore;
  /** The unattended executive's continuations, in the same database as the pauses. */
  continuations(tx?: Db): ContinuationStore;
  /** The unattended executive's runs, beside its continuations. */
  runs(tx?: Db): PostgresRunQueue;
  /** A chat session's continuations: files under the data folder, or the server. */
  chatContinuations(sessionId: string): ContinuationStore;
  /** Session checkpoints of interactive chats. */
  readonly checkpoints: CheckpointStore;
  /**
   * Session checkpoints of the unattended executive's delegations (parent and workers), in
   * the database, so that they are written in one transaction with the run and the pauses.
   */
  sessions(tx?: Db): CheckpointStore;
  /**
   * Calls `onNotify` whenever one of `channels` is notified (LISTEN/NOTIFY), e.g.
   * `ASKUSER_ANSWERED_CHANNEL`. Undefined where no other process can notify (the embedded
   * default) or notifications cannot arrive (a pooler without RUNNER_LISTEN_URL): poll.
   */
  listen?(channels: readonly string[], onNotify: () => void): Promise<() => Promise<void>>;
  /**
   * The holder key this process's claims name (`ClaimOptions.holder`), so that the runs it
   * leased are claimable at once when it is gone: on PostgreSQL a lock held on a connection
   * of its own (taken on first use); on the embedded default a key of this tenure of the
   * data folder's lock. Undefined behind a pooler without RUNNER_LISTEN_URL: leases expire.
   */
  leaseHolder(): Promise<number | undefined>;
  close(): Promise<void>;
}

/**
 * Takes a transaction-scoped advisory lock named `key` (released at commit or rollback), so
 * that two transactions about the same thing run one after the other. No table is read.
 */
export async function lockFor(tx: Db, key: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${key}))`);
}

/** Applies every package's migrations (idempotent). */
export async function migrateAll(db: Db): Promise<void> {
  await migrateAskUser(db);
  await migrateContinuations(db);
  await migrateCheckpoints(db);
}

async function needsMigration(db: Db): Promise<boolean> {
  const result = (await db.execute(
    sql`select to_regclass('aura.paused_states') is null as missing`,
  )) as unknown;
  const rows = Array.isArray(result) ? result : ((result as { rows: unknown[] }).rows ?? []);
  return Boolean((rows[0] as { missing?: boolean } | undefined)?.missing);
}

/** Options of {@link openStorage}. */
export interface OpenStorageOptions {
  /** The embedded default's data folder. */
  dataDir: string;
  /** PostgreSQL URL; when set, everything lives there. */
  databaseUrl?: string | undefined;
  /** The command opening it, named in the lock file. */
  command: string;
  /** Where to say that migrations were applied. */
  log: (line: string) => void;
  /**
   * Whether a data folder that does not exist yet is created (default true): only for a
   * command that writes, so that a mistyped --data is an error, not a new empty store.
   */
  create?: boolean;
  /** Where to say that the data folder was created (default `log`). */
  created?: (line: string) => void;
}

/**
 * Opens the embedded default (PGlite + files in `dataDir`) or, with `databaseUrl`,
 * PostgreSQL. Applies migrations on first use, saying so.
 */
export async function openStorage(options: OpenStorageOptions): Promise<Storage> {
  const created = options.databaseUrl ? undefined : newDataFolder(options);
  const storage = options.databaseUrl
    ? await openPostgres(options.databaseUrl)
    : await openEmbedded(options.dataDir, options.command);
  try {
    if (created) {
      (options.created ?? options.log)(`created the data folder ${created} (first use)`);
    } else if (await needsMigration(storage.db)) {
      options.log(`setting up the database in ${storage.where} (first use: applying migrations)`);
    }
    await migrateAll(storage.db);
  } catch (error) {
    await storage.close().catch(() => {});
    const cause = storage.kind === 'postgres' ? postgresCause(error) : undefined;
    if (cause === undefined) throw error;
    throw new RunnerError('unavailable', `cannot use PostgreSQL at ${storage.where}: ${cause}`, {
      cause: error,
    });
  }
  return storage;
}

/**
 * The data folder when it does not exist yet and may be created, undefined when it exists;
 * refuses one that does not exist for a command that only reads or changes what is stored.
 */
function newDataFolder(options: OpenStorageOptions): string | undefined {
  const dir = path.resolve(options.dataDir);
  if (existsSync(dir)) return undefined;
  if (options.create ?? true) return dir;
  throw new RunnerError(
    'unavailable',
    `the data folder ${dir} does not exist: check --data (or RUNNER_DATA); \`runner ${options.command}\` reads an existing store, exec, chat, serve and migrate create one`,
  );
}

function sqlStores(db: Db, queueOptions: PostgresRunQueueOptions = {}) {
  // One queue outside transactions: it keeps its prepared statements across calls.
  const queue = new PostgresRunQueue(db, queueOptions);
  return {
    db,
    transaction: <T>(fn: (tx: Db) => Promise<T>) => db.transaction((tx) => fn(tx as unknown as Db)),
    snapshot: <T>(fn: (tx: Db) => Promise<T>) =>
      db.transaction((tx) => fn(tx as unknown as Db), {
        isolationLevel: 'repeatable read',
        accessMode: 'read only',
      }),
    pauses: (tx?: Db) => new AskUserStore(tx ?? db),
    continuations: (tx?: Db): ContinuationStore => new PostgresContinuationStore(tx ?? db),
    runs: (tx?: Db) => (tx ? new PostgresRunQueue(tx) : queue),
    sessions: (tx?: Db): CheckpointStore => new PostgresCheckpointStore(tx ?? db),
  };
}

/** One line for a file-system error of the data folder, with its code (EACCES, ...). */
function folderProblem(dir: string, error: unknown): RunnerError {
  const { code, path: where = dir } = error as NodeJS.ErrnoException;
  const reasons: Record<string, string> = {
    EACCES: `permission denied on ${where}`,
    EPERM: `permission denied on ${where}`,
    EEXIST: `${where} is a file, not a folder`,
    ENOTDIR: `a parent of ${where} is a file, not a folder`,
    ENOENT: `no folder can be created at ${where}`,
    EROFS: `${where} is on a read-only file system`,
    ENOSPC: 'no space left on the device',
  };
  const reason = (code && reasons[code]) ?? (error as Error).message;
  return new RunnerError('unavailable', `cannot use the data folder ${dir}: ${reason}`, {
    cause: error,
  });
}

// Creates the folder and its missing parents one level at a time: Node's recursive mkdir
// loops forever where mkdir reports ENOENT under an existing parent (e.g. /proc/nope).
function makeFolder(dir: string): void {
  try {
    if (statSync(dir).isDirectory()) return;
    throw Object.assign(new Error(`${dir} is not a folder`), { code: 'EEXIST', path: dir });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const parent = path.dirname(dir);
  if (parent !== dir) makeFolder(parent);
  try {
    mkdirSync(dir);
  } catch (error) {
    // Another process starting at the same moment made it first.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(dir).isDirectory()) {
      throw error;
    }
  }
}

async function openEmbedded(dataDir: string, command: string): Promise<Storage> {
  const dir = path.resolve(dataDir);
  let release: () => void;
  try {
    makeFolder(dir);
    release = lockDataFolder(dir, command);
  } catch (error) {
    if (RunnerError.is(error) || typeof (error as NodeJS.ErrnoException).code !== 'string')
      throw error;
    throw folderProblem(dir, error);
  }
  try {
    // A command is a short process: optimising PGlite's WebAssembly costs more CPU than it
    // saves (a start of `runs` takes about 40% less), so its baseline code is kept.
    setFlagsFromString('--liftoff-only');
    const client = new PGlite(path.join(dir, 'pglite'));
    await client.waitReady;
    const db = drizzlePglite({ client }) as unknown as Db;
    // Whoever held the folder's lock before has ended: every lease but this key's is gone.
    const holder = randomHolderKey();
    return {
      kind: 'embedded',
      where: dir,
      // PGlite has no WAL writer: an asynchronous claim would die with its process.
      ...sqlStores(db, { synchronousClaim: true }),
      leaseHolder: async () => holder,
      chatContinuations: (sessionId) =>
        new FileContinuationStore(sessionDir(path.join(dir, 'chats'), sessionId)),
      checkpoints: new FileCheckpointStore(path.join(dir, 'sessions')),
      async close() {
        try {
          await client.close();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

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
    await Promise.race([client`select 1`, late]);
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
export interface PostgresTarget {
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
export function postgresTarget(databaseUrl: string, env?: Env): PostgresTarget {
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

async function openPostgres(databaseUrl: string): Promise<Storage> {
  const target = postgresTarget(databaseUrl);
  // Behind a transaction-mode pooler a named statement prepared on one server connection is
  // missing on the next: every statement goes unprepared.
  const client = postgres(target.url, {
    onnotice: () => {},
    max: target.poolSize,
    connect_timeout: target.connectTimeoutS,
    ...(target.pooled ? { prepare: false } : {}),
  });
  const where = describeUrl(target.url) + (target.pooled ? ' (through a pooler)' : '');
  await reachPostgres(client, target.connectTimeoutS, where);
  const db = drizzlePostgres({ client }) as unknown as Db;
  const stores = sqlStores(db);
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
