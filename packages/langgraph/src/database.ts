import type { StoreDatabase } from '@x/postgres-kit';

/**
 * A drizzle PostgreSQL database or transaction handle: `drizzle-orm/postgres-js` and
 * `drizzle-orm/pglite` databases, with or without a schema, and the `tx` inside
 * `db.transaction(async (tx) => ...)` all fit.
 */
export type LangGraphDatabase = StoreDatabase;
