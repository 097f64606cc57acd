/**
 * @packageDocumentation
 * The conformance suite of `@x/continuation`: {@link describeContinuationStore} registers
 * the whole `ContinuationStore` contract as vitest tests, for the built-in adapters and
 * for yours. Needs `vitest` (an optional peer dependency).
 */
export {
  type ContinuationStoreProcesses,
  type DescribeContinuationStoreOptions,
  describeContinuationStore,
} from './describe-store.js';
export { askingAssistant, sampleSuspension, transcriptEndingWith, uniqueId } from './fixtures.js';
