/**
 * @packageDocumentation
 * One agent thread's live state: user state, the plan, interrupts, the turn Runtime with its
 * bounded event channel, and pure checkpoint capture/apply with optimistic-concurrency stores.
 * File store: `@x/session/file`; conformance suite: `@x/session/testing`.
 */
export {
  CHECKPOINT_VERSION,
  MAX_CHECKPOINT_BYTES,
  type PendingToolCall,
  PendingToolCallSchema,
  parseCheckpoint,
  type SessionCheckpoint,
  SessionCheckpointSchema,
  serializeCheckpoint,
} from './checkpoint.js';
export {
  assertSafeThreadId,
  type CheckpointStore,
  type CheckpointSummary,
  conflictError,
  type DeleteOptions,
  isSafeThreadId,
  normaliseExpected,
  type PutOptions,
  type StoredCheckpoint,
} from './checkpoint-store.js';
export { type AppliedCheckpoint, Checkpointer } from './checkpointer.js';
export { SessionError, type SessionErrorCode, type SessionErrorDetails } from './errors.js';
export {
  createEventChannel,
  type EventChannel,
  type EventChannelOptions,
  type EventChannelStats,
  type EventSink,
} from './event-channel.js';
export {
  type Interrupt,
  InterruptMapSchema,
  InterruptSchema,
  type InterruptStatus,
  InterruptStatusSchema,
} from './interrupt.js';
export { MemoryCheckpointStore } from './memory-store.js';
export { PlanStore } from './plan-store.js';
export { isReservedRuntimeStateKey, stripPlanKeys } from './reserved-keys.js';
export { createRuntime, Runtime, type RuntimeOptions } from './runtime.js';
export { type DurableSnapshot, SessionManager } from './session-manager.js';
export { type Todo, TodoSchema } from './todo.js';
