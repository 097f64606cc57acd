/**
 * @packageDocumentation
 * The file adapter of `@x/continuation`: one JSON file per interaction under a folder,
 * written atomically and durably, with an exactly-once resolved mark.
 */
export {
  FileContinuationStore,
  type FileContinuationStoreOptions,
  sessionDir,
} from './file-store.js';
