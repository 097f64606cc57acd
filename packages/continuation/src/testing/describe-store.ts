import type { ContinuationStore } from '../store.js';
import { contractCases } from './contract.js';
import { type DescribeContinuationStoreOptions, OPTION_RULES } from './options.js';
import { checkOptions, registerCases } from './suite-plumbing.js';

export type {
  ContinuationStoreProcesses,
  DescribeContinuationStoreOptions,
} from './options.js';

/**
 * Registers the whole {@link ContinuationStore} contract as vitest tests: save/load round
 * trips, validation before any write, replace-vs-resolved, exactly-once `markResolved`
 * among concurrent callers on two instances, `save` racing `markResolved`, a failing
 * backend (`unavailable`), `listUnresolved`, the resume helpers, bad input, and, in real
 * OS processes, a `markResolved` race and SIGKILL during `save`. A failing test names the
 * promise the adapter broke. Call it from a test file of your adapter.
 *
 * @throws {TypeError} at once, naming the option, when a required option is missing or an
 *   option is not what it must be (e.g. `failing` left out instead of given as `null`).
 *
 * @example
 * // my-store.test.ts
 * import { describeContinuationStore } from '@x/continuation/testing';
 * describeContinuationStore({
 *   name: 'RedisContinuationStore',
 *   create: async () => new RedisContinuationStore(await connect(), { prefix }),
 *   peer: async (store) => new RedisContinuationStore(await connect(), { prefix }),
 *   failing: async () => new RedisContinuationStore(await connect({ port: 1 }), { prefix }),
 *   processes: {
 *     module: new URL('./fixtures/build-store.mjs', import.meta.url),
 *     args: () => ({ url: REDIS_URL, prefix }),
 *   },
 *   destroy: (store) => store.close(),
 * });
 */
export function describeContinuationStore<S extends ContinuationStore>(
  options: DescribeContinuationStoreOptions<S>,
): void {
  checkOptions('[@x/continuation] describeContinuationStore', options, OPTION_RULES);
  registerCases(`${options.name} (ContinuationStore conformance)`, options, contractCases(options));
}
