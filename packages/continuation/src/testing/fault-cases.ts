import { expect } from 'vitest';
import { ContinuationError } from '../errors.js';
import type { ContinuationStore } from '../store.js';
import type { ContractCase } from './contract-case.js';
import { sampleSuspension, uniqueId } from './fixtures.js';
import type { DescribeContinuationStoreOptions } from './options.js';
import { shown } from './suite-plumbing.js';

/** A failing backend: every method rejects with `unavailable`, keeping the original error. */
export function faultCases<S extends ContinuationStore>(
  options: DescribeContinuationStoreOptions<S>,
): ContractCase<S>[] {
  const { failing } = options;
  return [
    {
      group: 'a failing backend',
      name: 'every method rejects with unavailable and keeps the backend error as cause',
      ...(failing === null ? { skip: 'the adapter declares no backend that can fail' } : {}),
      run: async () => {
        const broken = await failing?.();
        if (broken === undefined) return;
        const s = sampleSuspension();
        const calls: Array<[string, () => Promise<unknown>]> = [
          ['save', () => broken.save(s)],
          ['load', () => broken.load(s.interactionId)],
          ['markResolved', () => broken.markResolved(uniqueId('ask'))],
          ['listUnresolved', () => broken.listUnresolved()],
        ];
        for (const [method, call] of calls) {
          const error = await call().then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(
            ContinuationError.hasCode(error, 'unavailable'),
            `failures of the backend are normalised: ${method} on a failing backend must reject with a ContinuationError of code unavailable, got ${shown(error)}`,
          ).toBe(true);
          expect(
            (error as Error).cause,
            `failures of the backend keep the original error: ${method}'s unavailable error has no cause`,
          ).toBeDefined();
        }
      },
    },
  ];
}
