/**
 * @packageDocumentation
 * `@x/postgres-kit`: the PostgreSQL plumbing `@x/askuser`, `@x/continuation-postgres` and
 * `@x/session-postgres` share, so it exists once: the drizzle handle type, result rows,
 * SQLSTATE lookup, the reason of a failure, quiet, idempotent migrations (and the error of
 * one that fails), a retry of reads over a dropped connection, and statements built on
 * first use.
 */
export { isConnectionDrop, retryRead } from './connection.js';
export { rowsOf, type StoreDatabase } from './database.js';
export { failureReason, sqlStateOf } from './failure.js';
export {
  type AppliedMigrations,
  applyMigrations,
  type MigrationsOptions,
  migrationsApplied,
} from './migrate.js';
export { MigrationError, type MigrationErrorOptions } from './migration-error.js';
export { lazyStatements } from './statements.js';
