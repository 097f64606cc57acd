import { applyMigrations } from '@x/postgres-kit';
import type { ContinuationDatabase } from './database.js';
import { wrapDatabaseError } from './errors.js';

/** Where `migrate` records applied migrations (never drizzle's shared default table). */
export const MIGRATIONS_SCHEMA = 'x_continuation';
/** The migrations table inside {@link MIGRATIONS_SCHEMA}. */
export const MIGRATIONS_TABLE = '__migrations';

/** What {@link migrate} did besides creating and upgrading the tables. */
export interface MigrateResult {
  /**
   * How many runs the queue's repair (migration 0005) found apart from their queue rows, which
   * no worker could claim, and made claimable again: 0 when it ran before or found none.
   */
  repairedRuns: number;
}

/**
 * Creates or upgrades `x_continuation.suspensions` and the run queue's tables by applying the
 * committed migrations under the package's `drizzle/` folder that this database has not seen
 * yet, recorded in `x_continuation.__migrations`. Idempotent, silent (it returns what it
 * repaired, for the caller to say), and safe from several processes at once (an advisory lock
 * serialises them); works over postgres.js, PGlite and a transaction handle. No other call of
 * this package creates tables.
 *
 * @throws {ContinuationError} `unavailable` when the database fails; a migration the server
 *   refuses is named in the message with the server's words, its SQLSTATE in `sqlState`.
 * @example
 * const db = drizzle({ client: postgres(process.env.DATABASE_URL!) });
 * const { repairedRuns } = await migrate(db);
 * if (repairedRuns > 0) console.warn(`made ${repairedRuns} stuck runs claimable again`);
 */
export async function migrate(db: ContinuationDatabase): Promise<MigrateResult> {
  const folder = new URL('../drizzle', import.meta.url);
  // The lock key "cont" serialises concurrent migrate() calls of this package.
  const lockKey = 0x636f6e74;
  const applied = await applyMigrations(db, { folder, schema: MIGRATIONS_SCHEMA, lockKey }).catch(
    (error) => {
      throw wrapDatabaseError(error, 'migrating @x/continuation-postgres');
    },
  );
  const repair = applied.find((migration) => migration.tag === '0005_run_queue_repair');
  return { repairedRuns: Number(repair?.rows[0]?.repaired_runs ?? 0) };
}
