/**
 * @packageDocumentation
 * `@x/askuser`: the PostgreSQL / PGlite store of pending human questions
 * (`aura.paused_states`): FIFO listing, answers, batch answers, auto-resolve, purge; who may
 * answer a question (audience, requester), the tamper-evident audit log of what happened, and
 * the outbox of notifications written in the transaction of their event.
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
export { type Audience, audienceSchema, type Identity, identitySchema } from './audience.js';
export {
  type AppendAuditEventOptions,
  type AuditEntry,
  type AuditHead,
  type AuditKey,
  type AuditKind,
  appendAuditEvent,
  auditHead,
  type ExportAuditOptions,
  exportAudit,
  purgeAuditOlderThan,
  sealAudit,
} from './audit.js';
export {
  type AuditProblem,
  type AuditVerification,
  type VerifyAuditOptions,
  verifyAudit,
} from './audit-verify.js';
export { ASKUSER_ANSWERED_CHANNEL, ASKUSER_CREATED_CHANNEL } from './channels.js';
export type { AskUserDatabase } from './database.js';
export { AskUserError, type AskUserErrorCode, type AskUserErrorOptions } from './errors.js';
export { MIGRATIONS_SCHEMA, MIGRATIONS_TABLE, migrate } from './migrate.js';
export { optionLabel, type ShownOption, shownOptions } from './options.js';
export {
  type ListNotificationsOptions,
  type NewNotification,
  NOTIFICATION_STATUSES,
  NotificationOutbox,
  type NotificationRecord,
  type NotificationStatus,
  newNotificationSchema,
} from './outbox.js';
export {
  approvals,
  auditEntries,
  auditHeads,
  auditSealed,
  auraSchema,
  pausedStates,
  pendingAudience,
} from './schema.js';
export {
  AskUserStore,
  type AskUserStoreOptions,
  DEFAULT_PENDING_LIMIT,
  DEFAULT_RECENT_LIMIT,
} from './store.js';
export type {
  AnsweredPause,
  AnsweredQuestion,
  AnswerOptions,
  AnswerOutcome,
  Approval,
  CleanupOptions,
  DueOutcome,
  InsertOptions,
  InsertParams,
  InsertPauseParams,
  ListAnsweredOptions,
  MarkResumedOptions,
  PauseDeadline,
  PauseEscalation,
  PauseQuorum,
  PauseRecord,
  PauseReminder,
  Pending,
  PendingCount,
  ResumeAnswers,
} from './types.js';
export {
  answerOptionsSchema,
  insertPauseParamsSchema,
  markResumedOptionsSchema,
} from './types.js';
