import type { ContinuationStore } from '../store.js';
import { basicCases } from './basic-cases.js';
import type { ContractCase } from './contract-case.js';
import { faultCases } from './fault-cases.js';
import { hostileCases } from './hostile-cases.js';
import type { DescribeContinuationStoreOptions } from './options.js';
import { processCases } from './process-cases.js';
import { raceCases } from './race-cases.js';
import { resolveCases } from './resolve-cases.js';

/**
 * Every case of the contract, in the order the suite registers them. Internal: the suite's
 * own tests run single cases against deliberately broken adapters.
 */
export function contractCases<S extends ContinuationStore>(
  options: DescribeContinuationStoreOptions<S>,
): ContractCase<S>[] {
  return [
    ...basicCases<S>(),
    ...resolveCases<S>(),
    ...raceCases(options),
    ...faultCases(options),
    ...hostileCases(options),
    ...processCases(options),
  ];
}
