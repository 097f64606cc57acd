import type { CheckpointStore } from '../checkpoint-store.js';

/**
 * How the suite runs your store in other OS processes: it forks children that each build a
 * store with your module, races them on one thread, and SIGKILLs a writing child.
 */
export interface CheckpointStoreProcesses<S extends CheckpointStore> {
  /**
   * Absolute path or `file:` URL of an ES module that plain `node` can run (JavaScript, e.g.
   * your built code or an `.mjs` file) whose default export builds a store from `args`:
   * `export default ({ directory }) => new MyStore(directory)`. It may return a promise.
   */
  module: string | URL;
  /** The JSON value handed to the module in every child: how to reach the data of `store`. */
  args: (store: S) => unknown;
  /** Processes writing at once. Default 4. */
  racers?: number;
  /** Writes each racing process attempts. Default 30. */
  rounds?: number;
  /** Writing children SIGKILLed at a random moment. Default 32. */
  kills?: number;
}

/** What {@link describeCheckpointStore} needs to test an adapter. */
export interface CheckpointStoreSuiteOptions<S extends CheckpointStore = CheckpointStore> {
  /** Shown in the test names. */
  name: string;
  /** A fresh, empty store for one test. */
  create: () => S | Promise<S>;
  /** Releases what `create` opened. */
  destroy?: (store: S) => void | Promise<void>;
  /**
   * A second, independent instance over the SAME storage as `store` (another instance over
   * the same folder, another connection pool), for the two-writer cases. Return `store`
   * itself only when there can be no second instance (in memory).
   * The suite never closes it (`destroy` gets only what `create` made): close it yourself.
   */
  peer: (store: S) => CheckpointStore | Promise<CheckpointStore>;
  /**
   * A store of your adapter whose backend fails on every call (a closed client, a dead
   * port, a folder path that is a file): each method must reject with `unavailable`, the
   * backend's error as `cause`. `null` when there is no backend that can fail (in memory).
   * The suite never closes the store: release what it holds yourself (e.g. in `afterAll`).
   */
  failing: (() => CheckpointStore | Promise<CheckpointStore>) | null;
  /** Runs the cross-process cases; `null` when the store cannot be shared by processes. */
  processes: CheckpointStoreProcesses<S> | null;
}
