/**
 * @packageDocumentation
 * `@x/askuser`: the PostgreSQL / PGlite store of pending human questions
 * (`aura.paused_states`): FIFO listing, answers, batch answers, auto-resolve, purge.
 * Plain fields in, plain fields out.
 */
export {
  ACTION_ACCEPT,
  ACTION_CANCEL,
  ACTION_DECLINE,
  AUTO_TERMINATED_MARKER,
  actions,
  type ResumeAction,
  type ResumeAnswer,
  resumeAnswerSchema,
} from './answer.js';
export { ASKUSER_ANSWERED_CHANNEL, ASKUSER_CREATED_CHANNEL } from './channels.js';
export type { AskUserDatabase } from './database.js';
export { AskUserError, type AskUserErrorCode, type AskUserErrorOptions } from './errors.js';
export { MIGRATIONS_SCHEMA, MIGRATIONS_TABLE, migrate } from './migrate.js';
export { auraSchema, pausedStates } from './schema.js';
export { AskUserStore, DEFAULT_PENDING_LIMIT, DEFAULT_RECENT_LIMIT } from './store.js';
export type {
  AnsweredPause,
  CleanupOptions,
  InsertParams,
  InsertPauseParams,
  ListAnsweredOptions,
  MarkResumedOptions,
  PauseRecord,
  Pending,
  ResumeAnswers,
} from './types.js';
export { insertPauseParamsSchema, markResumedOptionsSchema } from './types.js';
