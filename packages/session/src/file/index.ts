/**
 * @packageDocumentation
 * `@x/session/file`: a {@link CheckpointStore} on the local file system, with atomic,
 * durable writes and a revision check that holds across processes.
 */
export * from './file-store.js';
