/**
 * @packageDocumentation
 * `@x/postgres-kit`: the PostgreSQL plumbing `@x/askuser`, `@x/continuation-postgres` and
 * `@x/session-postgres` share, so it exists once: the drizzle handle type, result rows,
 * SQLSTATE lookup, the reason of a failure (and of a refused value, and the text a database
 * cannot store), quiet, idempotent migrations (and the error of
 * one that fails), a retry of reads over a dropped connection, statements built on
 * first use, statements compiled once per process run in pipelined transactions, and the
 * backoff of a retried attempt.
 */
export { type BackoffOptions, backoffMs } from './backoff.js';
export { isConnectionDrop, retryRead } from './connection.js';
export { rowsOf, type StoreDatabase } from './database.js';
export {
  failureReason,
  isRefusedValue,
  refusedValueReason,
  sqlStateOf,
  unstorableText,
} from './failure.js';
export {
  type AppliedMigration,
  type AppliedMigrations,
  applyMigrations,
  type MigrationsOptions,
  migrationsApplied,
} from './migrate.js';
export { MigrationError, type MigrationErrorOptions } from './migration-error.js';
export {
  type CommitWith,
  jsonParameter,
  type Pipeline,
  type PreparedRow,
  type PreparedStatement,
  pipelinedTransaction,
  prepareOnce,
  runPrepared,
  statementBuilder,
  type TransactionOptions,
  transaction,
} from './prepared.js';
export { lazyStatements } from './statements.js';
