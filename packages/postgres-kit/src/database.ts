import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/**
 * A drizzle PostgreSQL database or transaction handle: `drizzle-orm/postgres-js` and
 * `drizzle-orm/pglite` databases, with or without a schema, and the `tx` inside
 * `db.transaction(async (tx) => ...)` all fit.
 */
export type StoreDatabase = PgDatabase<PgQueryResultHKT, Record<string, unknown>>;

/** The rows of `db.execute(...)`: postgres.js returns an array, PGlite `{ rows }`. */
export function rowsOf(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  const rows = (result as { rows?: unknown } | null)?.rows;
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}
