import type { ContinuationStore } from '../store.js';
import type { SuiteCase } from './suite-plumbing.js';

/** What each case gets: a fresh store from `create`, and its `peer`. */
export interface CaseContext<S extends ContinuationStore> {
  store: S;
  peer: ContinuationStore;
}

/** One promise of the contract, checked by `run`. */
export type ContractCase<S extends ContinuationStore> = SuiteCase<CaseContext<S>>;
