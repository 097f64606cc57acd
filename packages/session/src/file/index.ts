/**
 * @packageDocumentation
 * `@x/session/file`: a {@link @x/session!CheckpointStore | CheckpointStore} on the local file system, with atomic,
 * durable writes and a revision check that holds across processes.
 */
export { FileCheckpointStore, type FileCheckpointStoreOptions } from './file-store.js';
