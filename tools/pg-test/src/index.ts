import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { serverReachable, testServerUrl } from './probe.js';
import { dropConnection, loadStockPostgres } from './stock-postgres.js';

// As the runner does: a test's PGlite lives seconds, too short for optimising its
// WebAssembly to pay back the CPU it takes (every PGlite below is made after this).
setFlagsFromString('--liftoff-only');

export {
  freePort,
  postgresBinDir,
  startThrowawayCluster,
  type ThrowawayCluster,
  throwawayClusterProblem,
} from './cluster.js';
export { listenEvents, type RawReply, type StreamedEvent, sendBytes } from './http.js';
export { type HttpReceiver, type ReceivedRequest, startHttpReceiver } from './http-receiver.js';
export { refusedMigration } from './migrations.js';
export {
  cookieJar,
  follow,
  type Member,
  startProvider,
  type TestProvider,
} from './oidc-provider.js';
export { type PgBouncer, pgBouncerProblem, startPgBouncer } from './pgbouncer.js';
export { serverProblem, serverReachable, serverSuitesSkipped, testServerUrl } from './probe.js';
export { type SmtpReceiver, startSmtpReceiver, unquote } from './smtp.js';
export { dropConnection, loadStockPostgres } from './stock-postgres.js';

/**
 * The server suites' gate. Resolves to the server URL, or to `undefined` when no server
 * answers and we are not in CI (the suites are then skipped and the run says so).
 * In CI (`CI=true`) an unreachable server is an error: the suites must run there.
 */
export async function serverForTests(): Promise<string | undefined> {
  if (await serverReachable()) return testServerUrl();
  if (process.env.CI === 'true') {
    throw new Error(
      `CI=true but no PostgreSQL server answers at ${testServerUrl()}: the server suites must run in CI`,
    );
  }
  return undefined;
}

/** A database of its own for one test file, on the test server. */
export interface TestDatabase {
  /** Connection URL of the new database. */
  url: string;
  /** Drops the database (closing any connection still open to it). */
  drop(): Promise<void>;
}

/**
 * Creates a fresh, uniquely named database (`<prefix>_<pid>_<random>`) on the server; the
 * caller drops it when done.
 */
export async function createTestDatabase(
  serverUrl = testServerUrl(),
  prefix = 'x_test',
): Promise<TestDatabase & { name: string }> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await sql.end();
      }
    },
  };
}

/** A drizzle database the SQL suites run against, with how to close it. */
export interface SqlTarget {
  kind: 'postgres' | 'pglite';
  db: PgDatabase<PgQueryResultHKT>;
  /** The raw client: a postgres.js `sql` or a PGlite instance. */
  client: postgres.Sql | PGlite;
  /** For the server target: the database URL (other processes can connect to it). */
  url?: string;
  close(): Promise<void>;
}

/** Opens drizzle over postgres.js on a fresh database of the test server. */
export async function openServerTarget(serverUrl: string): Promise<SqlTarget> {
  const database = await createTestDatabase(serverUrl);
  const client = postgres(database.url, { onnotice: () => {} });
  return {
    kind: 'postgres',
    db: drizzlePostgres({ client }) as unknown as PgDatabase<PgQueryResultHKT>,
    client,
    url: database.url,
    async close() {
      await client.end({ timeout: 5 });
      await database.drop();
    },
  };
}

/** The environment variable naming a PGlite template written by {@link writePgliteTemplate}. */
export const PGLITE_TEMPLATE_ENV = 'X_PGLITE_TEMPLATE';

/**
 * Writes a dump of a freshly initialised PGlite database to `file`: a test run makes it
 * once, and every {@link openPgliteTarget} then loads it instead of running initdb (~5 s).
 */
export async function writePgliteTemplate(file: string): Promise<void> {
  const client = new PGlite();
  try {
    await client.waitReady;
    const dump = await client.dumpDataDir('none');
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  } finally {
    await client.close();
  }
}

/**
 * Opens drizzle over a fresh in-memory PGlite: a copy of the run's template when
 * `X_PGLITE_TEMPLATE` names one, else a newly initialised database.
 */
export async function openPgliteTarget(): Promise<SqlTarget> {
  const template = process.env[PGLITE_TEMPLATE_ENV];
  const client = template
    ? new PGlite({ loadDataDir: new Blob([readFileSync(template)]) })
    : new PGlite();
  await client.waitReady;
  return {
    kind: 'pglite',
    db: drizzlePglite({ client }) as unknown as PgDatabase<PgQueryResultHKT>,
    client,
    async close() {
      await client.close();
    },
  };
}

/**
 * Creates a PGlite data folder at `dir` from the run's template (no initdb, which takes
 * seconds), so a program under test that opens `new PGlite(dir)` starts at once.
 */
export async function createPgliteDataDir(dir: string): Promise<void> {
  const template = process.env[PGLITE_TEMPLATE_ENV];
  const client = new PGlite(
    dir,
    template ? { loadDataDir: new Blob([readFileSync(template)]) } : {},
  );
  await client.waitReady;
  await client.close();
}

/** One place a SQL suite runs; `skip` is set when the server is absent outside CI. */
export interface SqlTargetSpec {
  kind: SqlTarget['kind'];
  skip: boolean;
  open: () => Promise<SqlTarget>;
}

/**
 * The targets a SQL suite runs on: PGlite always, and the real server, which is skipped
 * only when none answers outside CI. Use as
 * `for (const t of await sqlTargets()) describe.skipIf(t.skip)(t.kind, () => ...)`.
 */
export async function sqlTargets(): Promise<SqlTargetSpec[]> {
  const server = await serverForTests();
  return [
    { kind: 'pglite', skip: false, open: openPgliteTarget },
    {
      kind: 'postgres',
      skip: server === undefined,
      open: () => openServerTarget(server ?? testServerUrl()),
    },
  ];
}

/** A fresh database reached through stock postgres.js, and a way to drop its connection. */
export interface StockTarget {
  /** Drizzle over the stock client (one connection, so a drop hits the next statement). */
  db: PgDatabase<PgQueryResultHKT>;
  /** Terminates the connection under a running statement ({@link dropConnection}). */
  dropConnection(): Promise<void>;
  /** Closes both clients and drops the database. */
  close(): Promise<void>;
}

/** Opens {@link StockTarget} on a fresh database of the test server. */
export async function openStockTarget(serverUrl: string): Promise<StockTarget> {
  const database = await createTestDatabase(serverUrl);
  const admin = postgres(database.url, { max: 1, onnotice: () => {} });
  const client = (await loadStockPostgres())(database.url, { max: 1, onnotice: () => {} });
  return {
    db: drizzlePostgres({ client }) as unknown as PgDatabase<PgQueryResultHKT>,
    dropConnection: () => dropConnection(client, admin),
    async close() {
      await client.end({ timeout: 1 });
      await admin.end({ timeout: 1 });
      await database.drop();
    },
  };
}
