import { applyMigrations } from '@x/postgres-kit';
import type { LangGraphDatabase } from './database.js';
import { wrapDatabaseError } from './errors.js';

/** Where `migrate` records applied migrations (never drizzle's shared default table). */
export const MIGRATIONS_SCHEMA = 'x_langgraph';
/** The migrations table inside {@link MIGRATIONS_SCHEMA}. */
export const MIGRATIONS_TABLE = '__migrations';

/**
 * Creates or upgrades the `x_langgraph` tables by applying the committed migrations under the
 * package's `drizzle/` folder that this database has not seen yet, recorded in
 * `x_langgraph.__migrations`. Idempotent, silent, and safe from several processes at once
 * (an advisory lock serialises them); works over postgres.js, PGlite and a transaction
 * handle. The saver's own calls never create tables.
 *
 * @throws {LangGraphError} `unavailable` when the database fails; a migration the server
 *   refuses is named in the message with the server's words, its SQLSTATE in `sqlState`.
 * @example
 * const db = drizzle({ client: postgres(process.env.DATABASE_URL!) });
 * await migrate(db);
 */
export async function migrate(db: LangGraphDatabase): Promise<void> {
  const folder = new URL('../drizzle', import.meta.url);
  // The lock key "xlgr" serialises concurrent migrate() calls of this package.
  const lockKey = 0x786c6772;
  await applyMigrations(db, { folder, schema: MIGRATIONS_SCHEMA, lockKey }).catch((error) => {
    throw wrapDatabaseError(error, 'migrating @x/langgraph');
  });
}
