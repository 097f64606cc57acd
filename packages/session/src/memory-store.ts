import { parseCheckpoint, type SessionCheckpoint, serializeCheckpoint } from './checkpoint.js';
import {
  assertSafeThreadId,
  type CheckpointStore,
  type CheckpointSummary,
  conflictError,
  type DeleteOptions,
  normaliseExpected,
  type PutOptions,
  type StoredCheckpoint,
} from './checkpoint-store.js';
import { optionOf } from './guard.js';

interface Entry {
  revision: number;
  /** Serialised, so stored data can never alias a caller's object; `null` = deleted (tombstone). */
  json: string | null;
}

/**
 * A {@link CheckpointStore} in process memory: for tests and single-process hosts that need
 * no durability. Same contract as the durable adapters.
 *
 * @example
 * const store = new MemoryCheckpointStore();
 * const revision = await store.put('thread-1', checkpoint);
 * await store.put('thread-1', next, { expectedRevision: revision });
 */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly #entries = new Map<string, Entry>();

  async get(threadId: string): Promise<StoredCheckpoint | undefined> {
    assertSafeThreadId(threadId);
    const entry = this.#entries.get(threadId);
    if (entry?.json == null) return undefined;
    return { threadId, revision: entry.revision, checkpoint: parseCheckpoint(entry.json) };
  }

  async put(
    threadId: string,
    checkpoint: SessionCheckpoint,
    options: PutOptions = {},
  ): Promise<number> {
    assertSafeThreadId(threadId);
    const expected = normaliseExpected(optionOf(options, 'expectedRevision', 'put options'));
    const json = serializeCheckpoint(parseCheckpoint(checkpoint));
    const entry = this.#entries.get(threadId);
    const live = entry?.json == null ? null : entry.revision;
    if (live !== expected) throw conflictError(threadId, expected, live);
    const revision = (entry?.revision ?? 0) + 1;
    this.#entries.set(threadId, { revision, json });
    return revision;
  }

  async delete(threadId: string, options: DeleteOptions = {}): Promise<boolean> {
    assertSafeThreadId(threadId);
    const entry = this.#entries.get(threadId);
    const live = entry?.json == null ? null : entry.revision;
    const given = optionOf(options, 'expectedRevision', 'delete options');
    if (given !== undefined) {
      const expected = normaliseExpected(given);
      if (live !== expected) throw conflictError(threadId, expected, live);
    }
    if (entry === undefined || live === null) return false;
    this.#entries.set(threadId, { revision: entry.revision + 1, json: null });
    return true;
  }

  async list(): Promise<CheckpointSummary[]> {
    return [...this.#entries.entries()]
      .filter(([, entry]) => entry.json !== null)
      .map(([threadId, entry]) => ({ threadId, revision: entry.revision }))
      .sort((a, b) => (a.threadId < b.threadId ? -1 : a.threadId > b.threadId ? 1 : 0));
  }
}
