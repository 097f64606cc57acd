import type { CheckpointStore } from '../checkpoint-store.js';
import { basicCases } from './basic-cases.js';
import type { ContractCase } from './contract-case.js';
import { faultCases } from './fault-cases.js';
import type { CheckpointStoreSuiteOptions } from './options.js';
import { processCases } from './process-cases.js';
import { raceCases } from './race-cases.js';

/**
 * Every case of the contract, in the order the suite registers them. Internal: the suite's
 * own tests run single cases against deliberately broken adapters.
 */
export function contractCases<S extends CheckpointStore>(
  options: CheckpointStoreSuiteOptions<S>,
): ContractCase<S>[] {
  return [...basicCases<S>(), ...raceCases<S>(), ...faultCases(options), ...processCases(options)];
}
