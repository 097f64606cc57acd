import type { ContinuationStore } from '../store.js';

/** What an adapter can do beyond the base contract; each flag turns on its tests. */
export interface ContinuationStoreCapabilities {
  /** Ids become file names: path-like ids are refused with `unsafe_id`. */
  safeIds?: boolean;
}

/** Options of {@link describeContinuationStore}. */
export interface DescribeContinuationStoreOptions<S extends ContinuationStore> {
  /** Name of the `describe` block, e.g. `'FileContinuationStore'`. */
  name: string;
  /** A store for one test. It may share its backing with other tests: ids are always fresh. */
  create: () => S | Promise<S>;
  /** Releases what `create` made. */
  destroy?: (store: S) => void | Promise<void>;
  /**
   * A second, independent handle on the SAME data as `store` (a new instance over the same
   * folder or database). When given, races are also run across the two handles.
   */
  reopen?: (store: S) => ContinuationStore | Promise<ContinuationStore>;
  /**
   * Stores `record` (a JSON value, not validated) as the persisted record of
   * `interactionId`, unresolved, as if another program had written it. When given, the
   * corrupt-record, unknown-version and Go-compatibility cases run.
   */
  writeRaw?: (store: S, interactionId: string, record: unknown) => Promise<void>;
  capabilities?: ContinuationStoreCapabilities;
}
