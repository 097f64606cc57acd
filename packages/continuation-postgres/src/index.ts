/**
 * @packageDocumentation
 * The PostgreSQL adapter of `@x/continuation`: {@link PostgresContinuationStore} over a
 * caller-supplied drizzle database (postgres.js or PGlite, or a transaction handle), the
 * unattended executive's {@link PostgresRunQueue} beside it with its {@link RunWorker} (the
 * claim loop, lease renewal, retries and graceful stop), the drizzle tables, and an explicit,
 * idempotent {@link migrate}.
 */
export type { ContinuationDatabase } from './database.js';
export {
  listenPglite,
  listenPostgresJs,
  type PgliteListener,
  type PostgresJsListener,
  type RunQueueListen,
} from './listen.js';
export { MIGRATIONS_SCHEMA, MIGRATIONS_TABLE, type MigrateResult, migrate } from './migrate.js';
export {
  type AttemptCounts,
  backoffMs,
  DEFAULT_MAX_ATTEMPTS,
  describeAttempts,
  isRetryable,
  type RetryPolicy,
} from './retry-policy.js';
export {
  type ClaimedRun,
  type ClaimOptions,
  FINISHED_RUN_STATUSES,
  type LeaseRecord,
  type ListRunsOptions,
  type NewRun,
  PostgresRunQueue,
  type PostgresRunQueueOptions,
  type QueueDrift,
  RUN_READY_CHANNEL,
  RUN_RELEASED_CHANNEL,
  type RunCensus,
  type RunEnd,
  type RunRecord,
  type RunStatus,
  randomHolderKey,
  takeHolderLock,
} from './runs.js';
export {
  continuationSchema,
  type RunRow,
  runQueue,
  runs,
  type SuspensionRow,
  suspensions,
} from './schema.js';
export { PostgresContinuationStore, type PostgresContinuationStoreOptions } from './store.js';
export { DEFAULT_GRACE_MS, RunWorker } from './worker.js';
export type {
  RunJob,
  RunWorkerConnection,
  RunWorkerEvent,
  RunWorkerOptions,
} from './worker-options.js';
