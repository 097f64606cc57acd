import type { SessionCheckpoint } from './checkpoint.js';
import { SessionError } from './errors.js';
import { describeValue } from './guard.js';
import { isSafeId, unsafeIdReason } from './safe-id.js';

/** A checkpoint as stored, with the revision a writer must quote to replace it. */
export interface StoredCheckpoint {
  threadId: string;
  /** Positive integer; grows with every write of this thread id (also across delete). */
  revision: number;
  checkpoint: SessionCheckpoint;
}

/** One live thread of a store, as {@link CheckpointStore.list} reports it. */
export interface CheckpointSummary {
  threadId: string;
  revision: number;
}

/** Options of {@link CheckpointStore.put}. */
export interface PutOptions {
  /**
   * The revision the writer read. `null` or `undefined`: the writer expects no live
   * checkpoint (create). A mismatch is a `conflict` error and nothing is written.
   */
  expectedRevision?: number | null;
}

/** Options of {@link CheckpointStore.delete}. */
export interface DeleteOptions {
  /** When given, delete only if this is the stored revision (else `conflict`). */
  expectedRevision?: number;
}

/**
 * Durable checkpoints by thread id, with optimistic concurrency so two hosts never silently
 * overwrite each other's session: read (`get`) → work → `put` with the revision read.
 *
 * The contract every adapter meets (checked by `describeCheckpointStore` from
 * `@x/session/testing`):
 * - thread ids must be safe ({@link assertSafeThreadId}): `unsafe_id`, before any I/O;
 * - `put` validates the checkpoint (`invalid`, `unsupported_version`) before writing;
 * - `put` is atomic: of concurrent writers quoting the same revision exactly one wins, the
 *   others get `conflict`; the winner gets the new revision;
 * - revisions of a thread id never repeat, even across `delete`, so a revision read before
 *   a delete can never match again;
 * - what `get` returns is a copy: changing it changes nothing stored;
 * - storage failures are `unavailable`, with the driver error as `cause`.
 */
export interface CheckpointStore {
  /** The live checkpoint of a thread, or `undefined`. */
  get(threadId: string): Promise<StoredCheckpoint | undefined>;
  /**
   * Writes a checkpoint if the stored revision is `expectedRevision`; returns the new revision.
   *
   * @throws {SessionError} `conflict` when the revision is stale (or the thread exists on
   *   create, or is gone on update).
   */
  put(threadId: string, checkpoint: SessionCheckpoint, options?: PutOptions): Promise<number>;
  /** Deletes a thread's checkpoint; `false` when there was none. */
  delete(threadId: string, options?: DeleteOptions): Promise<boolean>;
  /** The live threads, ordered by thread id. */
  list(): Promise<CheckpointSummary[]>;
}

/**
 * True when `threadId` is a safe id: 1–200 of `A-Z a-z 0-9 . _ -`, not starting with `.`
 * (the one rule of every `@x` store).
 */
export function isSafeThreadId(threadId: unknown): threadId is string {
  return isSafeId(threadId);
}

/**
 * Refuses a thread id that could not safely be a file name (path separators, `..`, a leading
 * dot, empty, over 200 characters). Every store checks this first, so ids behave the same
 * whichever adapter is used.
 *
 * @throws {SessionError} `unsafe_id`.
 */
export function assertSafeThreadId(threadId: unknown): asserts threadId is string {
  const reason = unsafeIdReason('thread id', threadId);
  if (reason !== undefined) throw new SessionError('unsafe_id', reason);
}

/**
 * The `conflict` error every store throws, with the revisions in `details`. For adapter
 * authors, so a store of theirs reports a stale write exactly as the built-in ones do.
 */
export function conflictError(
  threadId: string,
  expectedRevision: number | null,
  actualRevision: number | null,
): SessionError {
  const expected = expectedRevision === null ? 'no checkpoint' : `revision ${expectedRevision}`;
  const actual =
    actualRevision === null ? 'none is stored' : `revision ${actualRevision} is stored`;
  return new SessionError(
    'conflict',
    `thread "${threadId}" changed: expected ${expected} but ${actual}; get it again, re-apply your change and retry`,
    { details: { threadId, expectedRevision, actualRevision } },
  );
}

/**
 * `expectedRevision` as a store compares it: absent or `null` → `null` (create), else a
 * positive integer. For adapter authors, so bad input is refused as the built-in stores do.
 *
 * @throws {SessionError} `invalid` for anything else.
 */
export function normaliseExpected(expected: unknown): number | null {
  if (expected === undefined || expected === null) return null;
  if (typeof expected !== 'number' || !Number.isInteger(expected) || expected < 1) {
    throw new SessionError(
      'invalid',
      `expectedRevision must be a positive integer or null, got ${typeof expected === 'number' ? expected : describeValue(expected)}`,
    );
  }
  return expected;
}
