import type { CheckpointStore } from '../checkpoint-store.js';
import type { SuiteCase } from './suite-plumbing.js';

/** What each case gets: a fresh, empty store from `create`, and its `peer`. */
export interface CaseContext<S extends CheckpointStore> {
  store: S;
  peer: CheckpointStore;
}

/** One promise of the contract, checked by `run`. */
export type ContractCase<S extends CheckpointStore> = SuiteCase<CaseContext<S>>;
