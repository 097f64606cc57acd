/**
 * @packageDocumentation
 * `@x/langgraph`: LangGraph.js on our durable core. {@link PostgresCheckpointSaver} is
 * LangGraph's checkpoint saver on PostgreSQL or PGlite through drizzle, with committed
 * migrations applied by {@link migrate}.
 */
export type { LangGraphDatabase } from './database.js';
export { LangGraphError, type LangGraphErrorCode, type LangGraphErrorOptions } from './errors.js';
export {
  LANGGRAPH_KIND,
  type LangGraphKindOptions,
  type LangGraphRun,
  langGraphKind,
  startLangGraphRun,
  type ThreadConfig,
  type ThreadGraph,
} from './interrupts.js';
export { MIGRATIONS_SCHEMA, MIGRATIONS_TABLE, migrate } from './migrate.js';
export { PostgresCheckpointSaver, type PostgresCheckpointSaverOptions } from './saver.js';
export { checkpointBlobs, checkpoints, checkpointWrites, langgraphSchema } from './schema.js';
