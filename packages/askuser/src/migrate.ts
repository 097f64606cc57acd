import { applyMigrations } from '@x/postgres-kit';
import type { AskUserDatabase } from './database.js';
import { wrapDatabaseError } from './errors.js';

/** Where `migrate` records applied migrations (never drizzle's shared default table). */
export const MIGRATIONS_SCHEMA = 'x_askuser';
/** The migrations table inside {@link MIGRATIONS_SCHEMA}. */
export const MIGRATIONS_TABLE = '__migrations';

/**
 * Creates or upgrades `aura.paused_states` (and its indexes and notify triggers) by
 * applying the committed migrations under the package's `drizzle/` folder that this
 * database has not seen yet, recorded in `x_askuser.__migrations`. Idempotent, silent, and
 * safe from several processes at once (an advisory lock serialises them); works over
 * postgres.js, PGlite and a transaction handle.
 *
 * @throws {AskUserError} `unavailable` when the database fails; a migration the server refuses
 *   is named in the message with the server's words, its SQLSTATE in `sqlState`.
 * @example
 * const db = drizzle({ client: postgres(process.env.DATABASE_URL!) });
 * await migrate(db);
 */
export async function migrate(db: AskUserDatabase): Promise<void> {
  const folder = new URL('../drizzle', import.meta.url);
  // The lock key "asku" serialises concurrent migrate() calls of this package.
  const lockKey = 0x61736b75;
  await applyMigrations(db, { folder, schema: MIGRATIONS_SCHEMA, lockKey }).catch((error) => {
    throw wrapDatabaseError(error, 'migrating @x/askuser');
  });
}
