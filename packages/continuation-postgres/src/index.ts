/**
 * @packageDocumentation
 * The PostgreSQL adapter of `@x/continuation`: {@link PostgresContinuationStore} over a
 * caller-supplied drizzle database (postgres.js or PGlite, or a transaction handle), the
 * drizzle table, and an explicit, idempotent {@link migrate}.
 */
export type { ContinuationDatabase } from './database.js';
export { MIGRATIONS_SCHEMA, MIGRATIONS_TABLE, migrate } from './migrate.js';
export { continuationSchema, type SuspensionRow, suspensions } from './schema.js';
export { PostgresContinuationStore, type PostgresContinuationStoreOptions } from './store.js';
