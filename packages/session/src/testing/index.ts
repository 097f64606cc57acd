/**
 * @packageDocumentation
 * `@x/session/testing`: the {@link CheckpointStore} conformance suite for adapter authors
 * (needs vitest), and sample data.
 */
export * from './describe-checkpoint-store.js';
export * from './sample.js';
