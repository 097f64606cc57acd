import type { SqlTarget, SqlTargetSpec } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type LangGraphDatabase, migrate } from '../src/index.js';

/** Empties the saver's tables. */
export async function emptyTables(db: LangGraphDatabase): Promise<void> {
  await db.execute(
    sql`truncate x_langgraph.checkpoints, x_langgraph.checkpoint_blobs, x_langgraph.checkpoint_writes`,
  );
}

/**
 * Opens `spec`'s target for the enclosing `describe`, migrated (twice: it is idempotent),
 * its tables emptied before each test, closed after the last; `db` is its database.
 */
export function migratedTables(spec: SqlTargetSpec): { readonly db: LangGraphDatabase } {
  let target: SqlTarget | undefined;
  const tables = {
    get db(): LangGraphDatabase {
      if (target === undefined) throw new Error(`the ${spec.kind} target is not open`);
      return target.db;
    },
  };
  beforeAll(async () => {
    target = await spec.open();
    await migrate(target.db);
    await migrate(target.db);
  });
  afterAll(async () => {
    await target?.close();
  });
  beforeEach(async () => {
    await emptyTables(tables.db);
  });
  return tables;
}
