import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

const rolledBack = Symbol('rolled back');

/**
 * What a package's `migrate(tx)` throws when its migrations run again over the objects they
 * already made (the server refuses the first `CREATE`): the record in `migrationsTable` is
 * deleted inside a transaction that is then rolled back, so the database is left as it was.
 */
export async function refusedMigration<
  Db extends PgDatabase<PgQueryResultHKT, Record<string, unknown>>,
>(db: Db, migrate: (tx: Db) => Promise<unknown>, migrationsTable: string): Promise<unknown> {
  let error: unknown = new Error(`migrate succeeded although ${migrationsTable} was emptied`);
  await db
    .transaction(async (tx) => {
      await tx.execute(sql.raw(`delete from ${migrationsTable}`));
      await migrate(tx as unknown as Db).catch((e: unknown) => {
        error = e;
      });
      throw rolledBack;
    })
    .catch((e: unknown) => {
      if (e !== rolledBack) throw e;
    });
  return error;
}
