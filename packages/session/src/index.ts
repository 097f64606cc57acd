/**
 * @packageDocumentation
 * One agent thread's live state: user state, the plan, interrupts, the turn Runtime with its
 * bounded event channel, and pure checkpoint capture/apply with optimistic-concurrency stores.
 * File store: `@x/session/file`; conformance suite: `@x/session/testing`.
 */
export * from './checkpoint.js';
export * from './checkpoint-store.js';
export * from './checkpointer.js';
export * from './errors.js';
export * from './event-channel.js';
export {
  type Interrupt,
  InterruptMapSchema,
  InterruptSchema,
  type InterruptStatus,
  InterruptStatusSchema,
} from './interrupt.js';
export * from './memory-store.js';
export * from './plan-store.js';
export * from './reserved-keys.js';
export * from './runtime.js';
export * from './session-manager.js';
export * from './todo.js';
