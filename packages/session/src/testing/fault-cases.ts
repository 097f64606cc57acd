import { expect } from 'vitest';
import type { CheckpointStore } from '../checkpoint-store.js';
import { SessionError } from '../errors.js';
import type { ContractCase } from './contract-case.js';
import type { CheckpointStoreSuiteOptions } from './options.js';
import { sampleCheckpoint } from './sample.js';
import { shown } from './suite-plumbing.js';

/** A failing backend: every method rejects with `unavailable`, keeping the original error. */
export function faultCases<S extends CheckpointStore>(
  options: CheckpointStoreSuiteOptions<S>,
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
        const calls: Array<[string, () => Promise<unknown>]> = [
          ['get', () => broken.get('t-1')],
          ['put', () => broken.put('t-1', sampleCheckpoint(1))],
          ['delete', () => broken.delete('t-1')],
          ['list', () => broken.list()],
        ];
        for (const [method, call] of calls) {
          const error = await call().then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(
            SessionError.hasCode(error, 'unavailable'),
            `failures of the backend are normalised: ${method} on a failing backend must reject with a SessionError of code unavailable, got ${shown(error)}`,
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
