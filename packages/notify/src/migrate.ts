import { migrate as migrateOutbox } from '@x/askuser';
import { applyMigrations, type StoreDatabase } from '@x/postgres-kit';
import { NotifyError } from './errors.js';

/** Where `migrate` records the package's migrations, and where its own tables live. */
export const MIGRATIONS_SCHEMA = 'x_notify';
/** The migrations table inside {@link MIGRATIONS_SCHEMA}. */
export const MIGRATIONS_TABLE = '__migrations';

/**
 * Creates or upgrades every table `@x/notify`'s loops drain or keep: `@x/askuser`'s
 * notification outbox and audit log (its `migrate`), then the package's own
 * (`x_notify.decision_links`, the used decision links; `x_notify.slack_messages`, where each
 * question's Slack message is), recorded in `x_notify.__migrations`. Idempotent, silent, and
 * safe from several processes at once (advisory locks serialise them); works over postgres.js,
 * PGlite and a transaction handle. No other call of this package creates tables.
 *
 * @throws `@x/askuser`'s `unavailable`; {@link NotifyError} `unavailable` when the database fails
 *   or refuses the package's own migration.
 * @example
 * const db = drizzle({ client: postgres(process.env.DATABASE_URL!) });
 * await migrate(db);
 */
export async function migrate(db: StoreDatabase): Promise<void> {
  await migrateOutbox(db);
  const folder = new URL('../drizzle', import.meta.url);
  // The lock key "ntfy" serialises concurrent migrate() calls of this package.
  const lockKey = 0x6e746679;
  await applyMigrations(db, { folder, schema: MIGRATIONS_SCHEMA, lockKey }).catch((error) => {
    const message = error instanceof Error ? error.message : String(error);
    throw new NotifyError('unavailable', `migrating @x/notify failed: ${message}`, {
      cause: error,
    });
  });
}
