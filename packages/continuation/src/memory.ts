import { decodeSuspension } from './codec.js';
import { ContinuationError } from './errors.js';
import {
  assertSafeId,
  type ContinuationStore,
  compareSuspensions,
  DEFAULT_MAX_RECORD_BYTES,
  type ListUnresolvedFilter,
  matchesFilter,
  prepareSave,
} from './store.js';
import type { Suspension } from './suspension.js';

/** Options of {@link MemoryContinuationStore}. */
export interface MemoryContinuationStoreOptions {
  /** Largest encoded record `save` accepts. Default {@link DEFAULT_MAX_RECORD_BYTES}. */
  maxRecordBytes?: number;
}

interface Entry {
  text: string;
  resolved: boolean;
}

/**
 * A {@link ContinuationStore} in process memory, for tests and for embedding where nothing
 * has to survive a restart. Records are kept encoded, so a stored suspension never shares
 * objects with the caller's.
 *
 * @example
 * const store = new MemoryContinuationStore();
 * await store.save(createSuspension({ interactionId: 'ask-1', toolUseId: 'toolu_1', assistant }));
 */
export class MemoryContinuationStore implements ContinuationStore {
  readonly #entries = new Map<string, Entry>();
  readonly #maxRecordBytes: number;

  constructor(options: MemoryContinuationStoreOptions = {}) {
    this.#maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  }

  async save(suspension: Suspension): Promise<void> {
    const { suspension: s, text } = prepareSave(suspension, this.#maxRecordBytes);
    if (this.#entries.get(s.interactionId)?.resolved) throw alreadyResolved(s.interactionId);
    this.#entries.set(s.interactionId, { text, resolved: false });
  }

  async load(interactionId: string): Promise<Suspension> {
    assertSafeId('interaction id', interactionId);
    const entry = this.#entries.get(interactionId);
    if (entry === undefined) throw notFound(interactionId);
    if (entry.resolved) throw alreadyResolved(interactionId);
    return decodeSuspension(JSON.parse(entry.text));
  }

  async markResolved(interactionId: string): Promise<void> {
    assertSafeId('interaction id', interactionId);
    const entry = this.#entries.get(interactionId);
    if (entry === undefined) throw notFound(interactionId);
    if (entry.resolved) throw alreadyResolved(interactionId);
    entry.resolved = true;
  }

  async listUnresolved(filter?: ListUnresolvedFilter): Promise<Suspension[]> {
    const out: Suspension[] = [];
    for (const entry of this.#entries.values()) {
      if (entry.resolved) continue;
      const s = decodeSuspension(JSON.parse(entry.text));
      if (matchesFilter(s, filter)) out.push(s);
    }
    return out.sort(compareSuspensions);
  }
}

/** The `not_found` error every adapter throws for an unknown id. */
export function notFound(interactionId: string): ContinuationError {
  return new ContinuationError(
    'not_found',
    `no continuation for interaction "${interactionId}": it was never saved here (check the store location and id)`,
    { interactionId },
  );
}

/** The `already_resolved` error every adapter throws for a consumed continuation. */
export function alreadyResolved(interactionId: string): ContinuationError {
  return new ContinuationError(
    'already_resolved',
    `interaction "${interactionId}" is already resolved: resuming it again would re-run its side effects`,
    { interactionId },
  );
}
