import { migrate as migrateQuestions } from '@x/askuser';
import { migrate as migrateRuns } from '@x/continuation-postgres';
import { applyMigrations, type StoreDatabase } from '@x/postgres-kit';
import { migrate as migrateCheckpoints } from '@x/session-postgres';
import { ExecutiveError } from './errors.js';

/** Where `migrate` records the executive's own migrations, and where its own tables live. */
export const MIGRATIONS_SCHEMA = 'x_executive';
/** The migrations table inside {@link MIGRATIONS_SCHEMA}. */
export const MIGRATIONS_TABLE = '__migrations';

/**
 * Creates or upgrades every table the executive's SQL storage uses: the migrations of the
 * stores it composes (`@x/askuser`'s questions and outbox, `@x/continuation-postgres`'s
 * continuations and runs, `@x/session-postgres`'s checkpoints), then its own
 * (`x_executive.gated_results`, the recorded result of each approved gated call, and
 * `x_executive.policy_decisions`, every policy decision), recorded in
 * `x_executive.__migrations`. Idempotent, silent, and safe from several processes at once
 * (advisory locks serialise them); works over postgres.js and PGlite. No other call of this
 * package creates tables.
 *
 * @returns how many stuck runs the run queue's repair made claimable again (see `migrate` of
 *   `@x/continuation-postgres`), for the caller to say.
 * @throws the composed stores' errors (`unavailable`); {@link ExecutiveError} `unavailable`
 *   when the database fails or refuses the executive's own migration.
 * @example
 * const db = drizzle({ client: postgres(process.env.DATABASE_URL!) });
 * await migrate(db);
 */
export async function migrate(db: StoreDatabase): Promise<{ repairedRuns: number }> {
  await migrateQuestions(db);
  const { repairedRuns } = await migrateRuns(db);
  await migrateCheckpoints(db);
  const folder = new URL('../drizzle', import.meta.url);
  // The lock key "exec" serialises concurrent migrate() calls of this package.
  const lockKey = 0x65786563;
  await applyMigrations(db, { folder, schema: MIGRATIONS_SCHEMA, lockKey }).catch((error) => {
    const message = error instanceof Error ? error.message : String(error);
    throw new ExecutiveError('unavailable', `migrating @x/executive failed: ${message}`, {
      cause: error,
    });
  });
  return { repairedRuns };
}
