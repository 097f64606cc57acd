import type { ContinuationStore } from '../store.js';
import {
  atLeast,
  isFunction,
  type OptionRule,
  optional,
  SUITE_OPTION_RULES,
} from './suite-plumbing.js';

/**
 * How the suite runs your store in other OS processes: it forks children that each build a
 * store with your module, races them on one continuation, and SIGKILLs a saving child.
 */
export interface ContinuationStoreProcesses<S extends ContinuationStore> {
  /**
   * Absolute path or `file:` URL of an ES module that plain `node` can run (JavaScript, e.g.
   * your built code or an `.mjs` file) whose default export builds a store from `args`:
   * `export default ({ directory }) => new MyStore(directory)`. It may return a promise.
   */
  module: string | URL;
  /** The JSON value handed to the module in every child: how to reach the data of `store`. */
  args: (store: S) => unknown;
  /** Processes racing in each round. Default 4. */
  racers?: number;
  /** Race rounds. Default 60. */
  rounds?: number;
  /** Saving children SIGKILLed at a random moment. Default 32. */
  kills?: number;
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
   * A second, independent instance over the SAME data as `store` (a new instance over the
   * same folder, another connection pool to the same database): the races run across the
   * two. Return `store` itself only when there can be no second instance (in memory).
   * The suite never closes it (`destroy` gets only what `create` made): close it yourself.
   */
  peer: (store: S) => ContinuationStore | Promise<ContinuationStore>;
  /**
   * A store of your adapter whose backend fails on every call (a closed client, a dead
   * port, a folder path that is a file): each method must reject with `unavailable`, the
   * backend's error as `cause`. `null` when there is no backend that can fail (in memory).
   * The suite never closes the store: release what it holds yourself (e.g. in `afterAll`).
   */
  failing: (() => ContinuationStore | Promise<ContinuationStore>) | null;
  /** Runs the cross-process cases; `null` when the store cannot be shared by processes. */
  processes: ContinuationStoreProcesses<S> | null;
  /**
   * Stores `record` (a JSON value, not validated) as the persisted record of
   * `interactionId`, unresolved, as if another program had written it. When given, the
   * corrupt-record, unknown-version and foreign-writer cases run. Each case then saves a
   * valid suspension over its record and resolves it, so a shared backing lists none of them.
   */
  writeRaw?: (store: S, interactionId: string, record: unknown) => Promise<void>;
  /** Rounds of `save` racing `markResolved` across the two instances. Default 60. */
  raceRounds?: number;
}

/** What each option of {@link DescribeContinuationStoreOptions} must be, checked at registration. */
export const OPTION_RULES: Record<string, OptionRule> = {
  ...SUITE_OPTION_RULES,
  writeRaw: {
    accepts: 'a function that stores a raw JSON record as unresolved, or nothing',
    valid: optional(isFunction),
  },
  raceRounds: {
    accepts: 'an integer of at least 1',
    valid: optional(atLeast(1)),
  },
};
