/**
 * @packageDocumentation
 * `@x/session/testing`: the {@link @x/session!CheckpointStore | CheckpointStore} conformance suite for adapter authors
 * (needs vitest), and sample data.
 */
export {
  type CheckpointStoreProcesses,
  type CheckpointStoreSuiteOptions,
  describeCheckpointStore,
} from './describe-checkpoint-store.js';
export { sampleCheckpoint } from './sample.js';
