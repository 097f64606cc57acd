import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { rowsOf, type SessionDatabase } from './database.js';
import { wrapDatabaseError } from './errors.js';

/** Where `migrate` records applied migrations (never drizzle's shared default table). */
export const MIGRATIONS_SCHEMA = 'x_session';
/** The migrations table inside {@link MIGRATIONS_SCHEMA}. */
export const MIGRATIONS_TABLE = '__migrations';

// Serialises concurrent migrate() calls from several processes on one server.
const LOCK_KEY = 0x78736573; // "xses"

/**
 * Creates or upgrades the `x_session` tables by applying the committed migrations under the
 * package's `drizzle/` folder that this database has not seen yet. Idempotent and safe to
 * run from several processes at once (an advisory lock serialises them). Works with drizzle
 * over postgres.js and PGlite, and inside a transaction handle. Applied migrations are
 * recorded in `x_session.__migrations`, so other packages' migrations never interfere.
 * Ordinary store calls never create tables.
 *
 * @throws {SessionError} `unavailable` when the database fails.
 * @example
 * const db = drizzle({ client: postgres(process.env.DATABASE_URL!) });
 * await migrate(db);
 */
export async function migrate(db: SessionDatabase): Promise<void> {
  const migrationsFolder = fileURLToPath(new URL('../drizzle', import.meta.url));
  const migrations = readMigrationFiles({ migrationsFolder });
  const table = sql`${sql.identifier(MIGRATIONS_SCHEMA)}.${sql.identifier(MIGRATIONS_TABLE)}`;
  try {
    await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_KEY})`);
      // Checked first rather than `if not exists`, which raises a NOTICE on every call.
      const [found] = rowsOf(
        await tx.execute(
          sql`select (select count(*) from pg_namespace where nspname = ${MIGRATIONS_SCHEMA})::int as schemas,
                     (to_regclass(${`${MIGRATIONS_SCHEMA}.${MIGRATIONS_TABLE}`}) is not null) as has_table`,
        ),
      );
      if (found?.schemas === 0) {
        await tx.execute(sql`create schema ${sql.identifier(MIGRATIONS_SCHEMA)}`);
      }
      if (found?.has_table !== true) {
        // Same layout as drizzle's own migrations table, so drizzle tooling can read it.
        await tx.execute(
          sql`create table ${table} (id serial primary key, hash text not null, created_at bigint)`,
        );
      }
      const [last] = rowsOf(
        await tx.execute(sql`select max(created_at)::text as at from ${table}`),
      );
      const appliedUpTo = last?.at == null ? -1 : Number(last.at);
      for (const migration of migrations) {
        if (migration.folderMillis <= appliedUpTo) continue;
        for (const statement of migration.sql) {
          if (statement.trim() !== '') await tx.execute(sql.raw(statement));
        }
        await tx.execute(
          sql`insert into ${table} (hash, created_at) values (${migration.hash}, ${migration.folderMillis})`,
        );
      }
    });
  } catch (error) {
    throw wrapDatabaseError(error, 'migrate');
  }
}
