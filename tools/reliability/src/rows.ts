import { type SQL, sql } from 'drizzle-orm';

/** A drizzle handle on PostgreSQL (postgres.js) or PGlite: both run `execute`. */
interface Executes {
  execute(query: SQL): Promise<unknown>;
}

/** The rows of `query`, on either driver: postgres.js returns an array, PGlite `{ rows }`. */
export async function queryRows<T>(db: Executes, query: SQL): Promise<T[]> {
  const result = await db.execute(query);
  return (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];
}

/** How many runs of the conversations named `prefix`… completed, and how many failed or were cancelled. */
export async function runCounts(
  db: Executes,
  prefix: string,
): Promise<{ completed: number; bad: number }> {
  const [row] = await queryRows<{ completed: number; bad: number }>(
    db,
    sql`select count(*) filter (where status = 'completed')::int as completed,
        count(*) filter (where status in ('failed', 'cancelled'))::int as bad
      from x_continuation.runs where conversation_id like ${`${prefix}%`}`,
  );
  return row ?? { completed: 0, bad: 0 };
}
