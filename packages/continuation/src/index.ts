/**
 * @packageDocumentation
 * The one durable suspend/resume mechanism for an agent turn that stops mid-flight to wait
 * for a human: the {@link Suspension} record, the singleton rule that makes a resume exact,
 * the resume messages, and the {@link ContinuationStore} contract with an in-memory store.
 * File store: `@x/continuation/file`. Conformance suite: `@x/continuation/testing`.
 */
export {
  type DecodeSuspensionOptions,
  decodeSuspension,
  encodeSuspension,
  type SuspensionRecord,
} from './codec.js';
export {
  ContinuationError,
  type ContinuationErrorCode,
  type ContinuationErrorOptions,
} from './errors.js';
export {
  alreadyResolved,
  MemoryContinuationStore,
  type MemoryContinuationStoreOptions,
  notFound,
} from './memory.js';
export { resolve, resumeMessages } from './resume.js';
export { isSafeId, MAX_ID_LENGTH } from './safe-id.js';
export { validateSingletonSuspension } from './singleton.js';
export {
  assertSafeId,
  type ContinuationStore,
  compareSuspensions,
  DEFAULT_MAX_RECORD_BYTES,
  type ListUnresolvedFilter,
  matchesFilter,
  type PreparedSuspension,
  prepareSave,
} from './store.js';
export {
  createSuspension,
  SUSPENSION_VERSION,
  type Suspension,
  type SuspensionDeadline,
  SuspensionDeadlineSchema,
  type SuspensionInit,
  SuspensionSchema,
  validateSuspension,
} from './suspension.js';
