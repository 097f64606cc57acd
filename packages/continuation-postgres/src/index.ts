/**
 * @packageDocumentation
 * The PostgreSQL adapter of `@x/continuation`: {@link PostgresContinuationStore} over a
 * caller-supplied drizzle database (postgres.js or PGlite, or a transaction handle), the
 * unattended executive's {@link PostgresRunQueue} beside it, the drizzle tables, and an
 * explicit, idempotent {@link migrate}.
 */
export type { ContinuationDatabase } from './database.js';
export { MIGRATIONS_SCHEMA, MIGRATIONS_TABLE, migrate } from './migrate.js';
export {
  type ClaimedRun,
  type ClaimOptions,
  FINISHED_RUN_STATUSES,
  type LeaseRecord,
  type ListRunsOptions,
  type NewRun,
  PostgresRunQueue,
  type PostgresRunQueueOptions,
  RUN_RELEASED_CHANNEL,
  type RunEnd,
  type RunRecord,
  type RunStatus,
  randomHolderKey,
  takeHolderLock,
} from './runs.js';
export {
  continuationSchema,
  type RunRow,
  runs,
  type SuspensionRow,
  suspensions,
} from './schema.js';
export { PostgresContinuationStore, type PostgresContinuationStoreOptions } from './store.js';
