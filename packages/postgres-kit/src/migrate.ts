import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SQL, sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { rowsOf, type StoreDatabase } from './database.js';
import { innermostMessage, sqlStateOf } from './failure.js';
import { MigrationError } from './migration-error.js';

/** Where a package's migrations are and how they are recorded. */
export interface MigrationsOptions {
  /** The drizzle-kit output folder (with `meta/_journal.json`), shipped with the package. */
  folder: string | URL;
  /** Schema of the migrations table; created when missing. */
  schema: string;
  /** The migrations table inside `schema`. Default `__migrations`. */
  table?: string;
  /** Advisory lock key that serialises concurrent `migrate` calls of this package. */
  lockKey: number;
}

/**
 * Applies the migrations of `options.folder` this database has not seen yet, in one
 * transaction under an advisory lock, and records them in `<schema>.<table>` (the layout
 * of drizzle's own migrations table, never drizzle's shared default). Idempotent and safe
 * from any number of sessions at once: the lock is taken before anything is created (the
 * schema and the migrations table included), and what is there is read again after it, so
 * each migration is applied once. Works over postgres.js, PGlite and a transaction handle.
 * It prints nothing: `client_min_messages` is raised to `warning` for its own statements,
 * so `IF NOT EXISTS` notices never reach a client's default `onnotice` (console.log).
 *
 * @returns the migrations applied now, in order (none when the database was up to date).
 * @throws {MigrationError} when the server refuses a statement: it names the migration (or
 *   the migrations table's set-up), the server's message and the SQLSTATE; the calling
 *   package wraps it in its own error. A failure without a SQLSTATE (the connection) is the
 *   driver error, unwrapped.
 * @example
 * await applyMigrations(db, {
 *   folder: new URL('../drizzle', import.meta.url),
 *   schema: 'x_continuation',
 *   lockKey: 0x636f6e74,
 * });
 */
export async function applyMigrations(
  db: StoreDatabase,
  options: MigrationsOptions,
): Promise<AppliedMigration[]> {
  const migrationsFolder =
    options.folder instanceof URL ? fileURLToPath(options.folder) : options.folder;
  const migrations = readMigrationFiles({ migrationsFolder });
  const tags = migrationTags(migrationsFolder);
  const schema = sql.identifier(options.schema);
  const tableName = options.table ?? '__migrations';
  const table = sql`${schema}.${sql.identifier(tableName)}`;
  // Up to date is the usual case (every start of a process): two reads, no transaction.
  const latest = migrations.at(-1)?.folderMillis ?? -1;
  if ((await appliedUpTo(db, options.schema, tableName, table)) >= latest) return [];
  const folderName = path.basename(migrationsFolder);
  const applied: AppliedMigration[] = [];
  await db.transaction(async (tx) => {
    // A statement of migration `tag`, or of the set-up when there is none.
    const run = (statement: SQL, tag?: string) =>
      tx.execute(statement).catch((error: unknown) => {
        const doing =
          tag === undefined
            ? `setting up ${options.schema}.${tableName}`
            : `migration ${tag} (${folderName}/${tag}.sql)`;
        throw migrationError(error, doing, tag);
      });
    const [before] = rowsOf(await run(sql`select current_setting('client_min_messages') as level`));
    await run(sql`select set_config('client_min_messages', 'warning', true)`);
    await run(sql`select pg_advisory_xact_lock(${options.lockKey})`);
    // After waiting on an advisory lock, PostgreSQL's own catalog lookups (as in `create
    // schema if not exists`) can miss what the lock's previous holder committed, when this
    // session changed catalogs before; a query of pg_namespace reads the committed state.
    const [existing] = rowsOf(
      await run(
        sql`select count(*)::int as n from pg_catalog.pg_namespace where nspname = ${options.schema}`,
      ),
    );
    if (!existing?.n) await run(sql`create schema ${schema}`);
    await run(
      sql`create table if not exists ${table} (id serial primary key, hash text not null, created_at bigint)`,
    );
    const [last] = rowsOf(await run(sql`select max(created_at)::text as at from ${table}`));
    const recorded = last?.at == null ? -1 : Number(last.at);
    for (const [index, migration] of migrations.entries()) {
      if (migration.folderMillis <= recorded) continue;
      const tag = tags[index] ?? String(index);
      let rows: Record<string, unknown>[] = [];
      for (const statement of migration.sql) {
        if (statement.trim() !== '') rows = rowsOf(await run(sql.raw(statement), tag));
      }
      applied.push({ tag, rows });
      await run(
        sql`insert into ${table} (hash, created_at) values (${migration.hash}, ${migration.folderMillis})`,
        tag,
      );
    }
    // A caller's transaction keeps its own level for what it runs after us.
    await run(sql`select set_config('client_min_messages', ${String(before?.level)}, true)`);
  });
  return applied;
}

/** A migration {@link applyMigrations} applied: its tag, and the rows its last statement returned. */
export interface AppliedMigration {
  /** The migration's file name without `.sql` (`0001_runs`). */
  tag: string;
  /** What its last statement returned: a migration that repairs data can say how much. */
  rows: Record<string, unknown>[];
}

/** Where a package's migrations are and how they are recorded, as {@link migrationsApplied} reads them. */
export type AppliedMigrations = Pick<MigrationsOptions, 'folder' | 'schema' | 'table'>;

/**
 * Whether the newest migration of every one of `targets` is recorded, in one read (their
 * journals are read from disk, not their SQL): what a process checks at each start before
 * it takes {@link applyMigrations}'s locked path, which stays the way to apply them. False
 * when one is behind or its migrations table does not exist yet; that statement fails then,
 * so call it outside a transaction.
 * @example
 * if (!(await migrationsApplied(db, [{ folder, schema: 'x_continuation' }]))) await migrate(db);
 */
export async function migrationsApplied(
  db: StoreDatabase,
  targets: readonly AppliedMigrations[],
): Promise<boolean> {
  const columns = targets.map(
    (target, i) =>
      sql`(select max(created_at)::text from ${sql.identifier(target.schema)}.${sql.identifier(target.table ?? '__migrations')}) as ${sql.identifier(`m${i}`)}`,
  );
  let row: Record<string, unknown> | undefined;
  try {
    [row] = rowsOf(await db.execute(sql`select ${sql.join(columns, sql`, `)}`));
  } catch {
    return false;
  }
  return targets.every((target, i) => {
    const at = row?.[`m${i}`];
    return at != null && Number(at) >= newestMigration(target.folder);
  });
}

/** When the folder's newest migration was made (its journal's `when`, drizzle's `folderMillis`), -1 for none. */
function newestMigration(folder: string | URL): number {
  const dir = folder instanceof URL ? fileURLToPath(folder) : folder;
  const journal = JSON.parse(readFileSync(path.join(dir, 'meta', '_journal.json'), 'utf8')) as {
    entries: Array<{ when: number }>;
  };
  return Math.max(-1, ...journal.entries.map((entry) => entry.when));
}

/** The tags of the folder's migrations (`0001_runs`), in the journal's order. */
function migrationTags(folder: string): string[] {
  const journal = JSON.parse(readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8')) as {
    entries: Array<{ tag: string }>;
  };
  return journal.entries.map((entry) => entry.tag);
}

/** A statement's failure as a {@link MigrationError} when the server gave a SQLSTATE. */
function migrationError(error: unknown, doing: string, migration?: string): unknown {
  const sqlState = sqlStateOf(error);
  if (sqlState === undefined) return error;
  return new MigrationError(`${doing}: ${innermostMessage(error)} (SQLSTATE ${sqlState})`, {
    ...(migration === undefined ? {} : { migration }),
    sqlState,
    cause: error,
  });
}

/** The newest migration recorded in `table`, or -1 when it does not exist yet. */
async function appliedUpTo(
  db: StoreDatabase,
  schema: string,
  name: string,
  table: ReturnType<typeof sql>,
): Promise<number> {
  const [present] = rowsOf(
    await db.execute(
      sql`select to_regclass(format('%I.%I', ${schema}::text, ${name}::text)) is not null as present`,
    ),
  );
  if (!present?.present) return -1;
  const [last] = rowsOf(await db.execute(sql`select max(created_at)::text as at from ${table}`));
  return last?.at == null ? -1 : Number(last.at);
}
