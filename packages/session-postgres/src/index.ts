/**
 * @packageDocumentation
 * `@x/session-postgres`: the `@x/session` {@link @x/session!CheckpointStore | CheckpointStore} on PostgreSQL or PGlite
 * through drizzle, with committed migrations applied by {@link migrate}.
 */
export type { SessionDatabase } from './database.js';
export { MIGRATIONS_SCHEMA, MIGRATIONS_TABLE, migrate } from './migrate.js';
export { checkpoints, sessionSchema } from './schema.js';
export { PostgresCheckpointStore } from './store.js';
