import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { rowsOf, type StoreDatabase } from './database.js';

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
 * from several processes at once; works over postgres.js, PGlite and a transaction handle.
 * It prints nothing: `client_min_messages` is raised to `warning` for its own statements,
 * so `IF NOT EXISTS` notices never reach a client's default `onnotice` (console.log).
 *
 * @throws the driver error, unwrapped: the calling package wraps it in its own error.
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
): Promise<void> {
  const migrationsFolder =
    options.folder instanceof URL ? fileURLToPath(options.folder) : options.folder;
  const migrations = readMigrationFiles({ migrationsFolder });
  const schema = sql.identifier(options.schema);
  const table = sql`${schema}.${sql.identifier(options.table ?? '__migrations')}`;
  // Up to date is the usual case (every start of a process): two reads, no transaction.
  const latest = migrations.at(-1)?.folderMillis ?? -1;
  if ((await appliedUpTo(db, options.schema, options.table ?? '__migrations', table)) >= latest) {
    return;
  }
  await db.transaction(async (tx) => {
    const [before] = rowsOf(
      await tx.execute(sql`select current_setting('client_min_messages') as level`),
    );
    await tx.execute(sql`select set_config('client_min_messages', 'warning', true)`);
    await tx.execute(sql`select pg_advisory_xact_lock(${options.lockKey})`);
    await tx.execute(sql`create schema if not exists ${schema}`);
    await tx.execute(
      sql`create table if not exists ${table} (id serial primary key, hash text not null, created_at bigint)`,
    );
    const [last] = rowsOf(await tx.execute(sql`select max(created_at)::text as at from ${table}`));
    const recorded = last?.at == null ? -1 : Number(last.at);
    for (const migration of migrations) {
      if (migration.folderMillis <= recorded) continue;
      for (const statement of migration.sql) {
        if (statement.trim() !== '') await tx.execute(sql.raw(statement));
      }
      await tx.execute(
        sql`insert into ${table} (hash, created_at) values (${migration.hash}, ${migration.folderMillis})`,
      );
    }
    // A caller's transaction keeps its own level for what it runs after us.
    await tx.execute(sql`select set_config('client_min_messages', ${String(before?.level)}, true)`);
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
