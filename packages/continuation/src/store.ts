import { encodeSuspension, type SuspensionRecord } from './codec.js';
import { ContinuationError } from './errors.js';
import { unsafeIdReason } from './safe-id.js';
import { checkSuspension, type Suspension } from './suspension.js';

/** Which unresolved continuations {@link ContinuationStore.listUnresolved} returns (all given fields must match). */
export interface ListUnresolvedFilter {
  sessionId?: string;
  runId?: string;
}

/**
 * Where suspensions live between suspend and resume. Every adapter keeps the same
 * contract (checked by `describeContinuationStore` from `@x/continuation/testing`):
 *
 * - Interaction ids are safe ids ({@link assertSafeId}); any other is `unsafe_id`, before any I/O.
 * - `save` validates the schema and the singleton rule and refuses (`invalid`,
 *   `not_singleton`) before writing anything. Saving over an unresolved continuation with
 *   the same id replaces it atomically; over a resolved one it fails with `already_resolved`.
 * - `load` of an unknown id is `not_found`; of a resolved one `already_resolved`; a record of
 *   an unknown version `unsupported_version`; a corrupt record `invalid` naming the field.
 * - `markResolved` is exactly-once: of several racing callers (also in several processes)
 *   exactly one succeeds, the others get `already_resolved`; an unknown id is `not_found`.
 * - `listUnresolved` returns the unresolved continuations, oldest first.
 * - Failures of the medium itself are `unavailable`, with the original error as `cause`.
 */
export interface ContinuationStore {
  /** Writes a suspension (validated first); replaces an unresolved one with the same id. */
  save(suspension: Suspension): Promise<void>;
  /** Reads an unresolved suspension. */
  load(interactionId: string): Promise<Suspension>;
  /** Marks the suspension consumed, exactly once. */
  markResolved(interactionId: string): Promise<void>;
  /** The unresolved suspensions matching `filter`, oldest (`createdAt`) first. */
  listUnresolved(filter?: ListUnresolvedFilter): Promise<Suspension[]>;
}

/**
 * Refuses an id no store accepts: empty, over 200 characters, starting with `.`, or holding
 * anything but ASCII letters, digits, `.`, `_` and `-`. Every adapter checks it before any
 * I/O, so ids behave the same whichever store holds them (and never become a path).
 *
 * @throws {ContinuationError} `unsafe_id`.
 */
export function assertSafeId(kind: string, id: unknown): asserts id is string {
  const reason = unsafeIdReason(kind, id);
  if (reason === undefined) return;
  throw new ContinuationError(
    'unsafe_id',
    reason,
    typeof id === 'string' ? { interactionId: id } : {},
  );
}

/** Largest encoded record a store writes or reads by default: 16 MiB. */
export const DEFAULT_MAX_RECORD_BYTES = 16 * 1024 * 1024;

/** A suspension ready to be written: validated, encoded, size-checked. */
export interface PreparedSuspension {
  /** The validated suspension; it may share the transcript with the input (encode, don't keep). */
  suspension: Suspension;
  record: SuspensionRecord;
  /** `JSON.stringify(record)`. */
  text: string;
}

/**
 * What every adapter does in `save` before touching its medium: checks the id is safe,
 * validates (schema, singleton, transcript), refuses a suspension already marked
 * `resolved` (resolve through the store instead), encodes it and checks the size limit.
 *
 * @throws {ContinuationError} `unsafe_id`, `invalid` or `not_singleton`.
 */
export function prepareSave(
  input: Suspension,
  maxRecordBytes: number = DEFAULT_MAX_RECORD_BYTES,
): PreparedSuspension {
  // A path-like id is named as such; an empty or missing one is left to the schema check.
  const given: unknown = (input as { interactionId?: unknown } | null)?.interactionId;
  if (typeof given === 'string' && given !== '') assertSafeId('interaction id', given);
  const suspension = checkSuspension(input, true);
  if (suspension.resolved) {
    throw new ContinuationError(
      'invalid',
      'suspension resolved: save only unresolved suspensions; mark them with markResolved',
      { field: 'resolved', interactionId: suspension.interactionId },
    );
  }
  const record = encodeSuspension(suspension);
  const text = JSON.stringify(record);
  const bytes = Buffer.byteLength(text);
  if (bytes > maxRecordBytes) {
    throw new ContinuationError(
      'invalid',
      `suspension is ${bytes} bytes encoded, over the store's limit of ${maxRecordBytes}: trim the transcript or raise maxRecordBytes`,
      { field: 'messages', interactionId: suspension.interactionId },
    );
  }
  return { suspension, record, text };
}

/** True when `s` matches every field given in `filter`. */
export function matchesFilter(s: Suspension, filter: ListUnresolvedFilter = {}): boolean {
  return (
    (filter.sessionId === undefined || s.sessionId === filter.sessionId) &&
    (filter.runId === undefined || s.runId === filter.runId)
  );
}

/** Orders suspensions oldest first, ties by interaction id (the order `listUnresolved` promises). */
export function compareSuspensions(a: Suspension, b: Suspension): number {
  const byTime = a.createdAt.getTime() - b.createdAt.getTime();
  if (byTime !== 0) return byTime;
  return a.interactionId < b.interactionId ? -1 : a.interactionId > b.interactionId ? 1 : 0;
}
