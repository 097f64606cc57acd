import type { CheckpointStore } from '../checkpoint-store.js';
import { contractCases } from './contract.js';
import type { CheckpointStoreSuiteOptions } from './options.js';
import { checkOptions, registerCases, SUITE_OPTION_RULES } from './suite-plumbing.js';

export type { CheckpointStoreProcesses, CheckpointStoreSuiteOptions } from './options.js';

/**
 * Registers the whole {@link CheckpointStore} contract as vitest tests: create/update/
 * delete/list, optimistic concurrency on two instances (stale, create-over-existing,
 * concurrent writers: exactly one wins), revisions that never repeat across delete,
 * validation before writing, unsafe ids, copies on read, a failing backend
 * (`unavailable`), and, in real OS processes, racing writers and SIGKILL during `put`. A
 * failing test names the promise the adapter broke. Call it at the top level of a test file.
 *
 * @throws {TypeError} at once, naming the option, when a required option is missing or an
 *   option is not what it must be (e.g. `failing` left out instead of given as `null`).
 *
 * @example
 * import { describeCheckpointStore } from '@x/session/testing';
 * describeCheckpointStore({
 *   name: 'RedisCheckpointStore',
 *   create: async () => new RedisCheckpointStore(await connect(), { prefix: randomPrefix() }),
 *   peer: async (store) => new RedisCheckpointStore(await connect(), { prefix: store.prefix }),
 *   failing: async () => new RedisCheckpointStore(await connect({ port: 1 })),
 *   processes: null,
 *   destroy: (store) => store.close(),
 * });
 */
export function describeCheckpointStore<S extends CheckpointStore>(
  options: CheckpointStoreSuiteOptions<S>,
): void {
  checkOptions('[@x/session] describeCheckpointStore', options, SUITE_OPTION_RULES);
  registerCases(`CheckpointStore contract: ${options.name}`, options, contractCases(options));
}
