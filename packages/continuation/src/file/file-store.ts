import { link, mkdir, open, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { checkRecordVersion, decodeSuspension } from '../codec.js';
import { ContinuationError } from '../errors.js';
import { alreadyResolved, notFound } from '../memory.js';
import {
  assertSafeId,
  type ContinuationStore,
  compareSuspensions,
  DEFAULT_MAX_RECORD_BYTES,
  type ListUnresolvedFilter,
  matchesFilter,
  prepareSave,
} from '../store.js';
import type { Suspension } from '../suspension.js';
import { commitTemp, isTempName, readAll, syncDir, writeTemp } from './durable.js';

/** Options of {@link FileContinuationStore} (the folder is the first argument). */
export interface FileContinuationStoreOptions {
  /**
   * Largest record (encoded JSON bytes) `save` writes and `load` reads; a bigger file is
   * refused as `invalid` without being read. Default {@link DEFAULT_MAX_RECORD_BYTES} (16 MiB).
   */
  maxRecordBytes?: number;
  /**
   * Flush files and the folder to disk on every write. Default `true`. Turning it off keeps
   * writes atomic (never half-written) but a power loss may then undo recent ones.
   */
  fsync?: boolean;
}

const RECORD = '.json';
const MARK = '.resolved';
/** Links tried while racing saves keep renaming new records over the one being linked. */
const LINK_ATTEMPTS = 20;
// How the compact JSON of an unresolved record of version 1 or 2 begins and ends (`encodeSuspension`).
const UNRESOLVED_HEADS = ['{"version":1,', '{"version":2,'];
const UNRESOLVED_TAIL = ',"resolved":false}';

function isErrno(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === code;
}

/** For `unlink(...).catch(ignoreMissing)`: a file already gone is what was wanted. */
function ignoreMissing(err: unknown): void {
  if (!isErrno(err, 'ENOENT')) throw err;
}

function unavailable(action: string, id: string | undefined, cause: unknown): ContinuationError {
  return new ContinuationError(
    'unavailable',
    `could not ${action}: ${(cause as Error)?.message ?? String(cause)} (check the folder exists and is writable)`,
    { ...(id === undefined ? {} : { interactionId: id }), cause },
  );
}

/**
 * A {@link ContinuationStore} keeping one JSON file per interaction in a folder:
 * `<interactionId>.json` holds the record (the snake_case JSON of `encodeSuspension`),
 * and `<interactionId>.resolved` marks it consumed.
 *
 * - Writes are atomic and durable (temp file, fsync, rename, fsync the folder); stray temp
 *   files of a crash are ignored.
 * - `markResolved` hard-links `<id>.json` to `<id>.resolved` (`link` fails for every loser,
 *   so it is exactly-once across processes), then removes `<id>.json`; the marker decides,
 *   so a crash in between leaves the interaction resolved. A record saying
 *   `"resolved": true` is resolved too.
 * - On a case-insensitive file system, ids differing only in case are the same record.
 *
 * @example
 * import { FileContinuationStore, sessionDir } from '@x/continuation/file';
 * const store = new FileContinuationStore(sessionDir(dataDir, sessionId));
 * await store.save(suspension);
 */
export class FileContinuationStore implements ContinuationStore {
  /** The folder holding the records; created on the first write. */
  readonly directory: string;
  readonly #maxRecordBytes: number;
  readonly #fsync: boolean;

  /**
   * @param directory the folder holding the records; created on the first write.
   */
  constructor(directory: string, options: FileContinuationStoreOptions = {}) {
    this.directory = directory;
    this.#maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
    this.#fsync = options.fsync ?? true;
  }

  /** @deprecated Use {@link FileContinuationStore.directory}. */
  get dir(): string {
    return this.directory;
  }

  async save(suspension: Suspension): Promise<void> {
    const { suspension: s, text } = prepareSave(suspension, this.#maxRecordBytes);
    const id = s.interactionId;
    try {
      // The check for a resolved record and the flushed temp file do not depend on each
      // other, so they run side by side; only the rename waits for the check.
      const [check, written] = await Promise.allSettled([
        this.#isResolved(id),
        this.#writeTemp(id + RECORD, text),
      ]);
      if (check.status === 'rejected' || check.value) {
        if (written.status === 'fulfilled') await unlink(written.value).catch(() => {});
        throw check.status === 'rejected' ? check.reason : alreadyResolved(id);
      }
      if (written.status === 'rejected') throw written.reason;
      const temp = written.value;
      await commitTemp(this.directory, temp, id + RECORD, this.#fsync);
      // A markResolved that slipped in between the check and the rename wins: the marker
      // decides, so report it, and take back the record just written (a reader of records
      // alone would load it).
      if (await this.#exists(id + MARK)) {
        await unlink(join(this.directory, id + RECORD)).catch(ignoreMissing);
        throw alreadyResolved(id);
      }
    } catch (err) {
      if (ContinuationError.is(err)) throw err;
      throw unavailable(`save interaction "${id}" in ${this.directory}`, id, err);
    }
  }

  async load(interactionId: string): Promise<Suspension> {
    assertSafeId('interaction id', interactionId);
    // Side by side: marking never changes a record's text (it links the record to the
    // marker, then removes it), so whichever order the two reads take, "no marker, an
    // unresolved record" held at some moment during this call. A record found missing may
    // have been marked after the marker was looked for: look again before saying not_found.
    const [marked, read] = await Promise.allSettled([
      this.#exists(interactionId + MARK),
      this.#readRecord(interactionId),
    ]);
    if (marked.status === 'rejected') throw marked.reason;
    if (marked.value) throw alreadyResolved(interactionId);
    if (read.status === 'rejected') throw read.reason;
    if (read.value === undefined) throw await this.#goneError(interactionId);
    const s = this.#decode(interactionId, read.value);
    if (s.resolved) throw alreadyResolved(interactionId);
    return s;
  }

  async markResolved(interactionId: string): Promise<void> {
    assertSafeId('interaction id', interactionId);
    const id = interactionId;
    const record = join(this.directory, id + RECORD);
    const text = await this.#readText(id);
    // No record: resolved before (its record became the marker), or never saved.
    if (text === undefined) throw await this.#goneError(id);
    // The record is not decoded (load does that): only its flag matters here. The layout
    // this store writes shows it at the ends of the text; any other layout is parsed.
    if (
      !(UNRESOLVED_HEADS.some((head) => text.startsWith(head)) && text.endsWith(UNRESOLVED_TAIL))
    ) {
      const parsed = this.#parseRecord(id, text);
      if (parsed.interaction_id !== id) throw this.#otherId(id, parsed.interaction_id);
      if (parsed.resolved === true) throw alreadyResolved(id);
      if (parsed.resolved !== false) {
        throw new ContinuationError('invalid', 'suspension record resolved: expected a boolean', {
          interactionId: id,
          field: 'resolved',
        });
      }
    }
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          await link(record, join(this.directory, id + MARK));
          break;
        } catch (err) {
          if (isErrno(err, 'EEXIST')) throw alreadyResolved(id);
          if (!isErrno(err, 'ENOENT')) throw err;
          // Linux also says ENOENT when a racing save renamed a new record over the one being
          // linked (that file had no name left): link the new record.
          if (attempt >= LINK_ATTEMPTS || !(await this.#exists(id + RECORD))) {
            throw await this.#goneError(id);
          }
        }
      }
      // The marker decides from here on. Removing the record keeps a reader of records
      // alone from loading it.
      await unlink(record).catch(ignoreMissing);
      if (this.#fsync) await syncDir(this.directory);
    } catch (err) {
      if (ContinuationError.is(err)) throw err;
      throw unavailable(`mark interaction "${id}" resolved in ${this.directory}`, id, err);
    }
  }

  async listUnresolved(filter?: ListUnresolvedFilter): Promise<Suspension[]> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return [];
      throw unavailable(`list ${this.directory}`, undefined, err);
    }
    const marked = new Set(
      names.filter((n) => n.endsWith(MARK)).map((n) => n.slice(0, -MARK.length)),
    );
    const out: Suspension[] = [];
    for (const name of names) {
      if (isTempName(name) || !name.endsWith(RECORD)) continue;
      const id = name.slice(0, -RECORD.length);
      if (marked.has(id)) continue;
      try {
        assertSafeId('interaction id', id);
      } catch {
        continue; // not a file this store wrote
      }
      const s = await this.#read(id);
      if (s === undefined || s.resolved || !matchesFilter(s, filter)) continue;
      out.push(s);
    }
    return out.sort(compareSuspensions);
  }

  async #exists(name: string): Promise<boolean> {
    try {
      await stat(join(this.directory, name));
      return true;
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return false;
      throw unavailable(`check ${join(this.directory, name)}`, undefined, err);
    }
  }

  /** The error for an id with no record: `already_resolved` when its marker exists, else `not_found`. */
  async #goneError(id: string): Promise<ContinuationError> {
    return (await this.#exists(id + MARK)) ? alreadyResolved(id) : notFound(id);
  }

  /** True when `<id>` is resolved: its record says so, or its marker exists. */
  async #isResolved(id: string): Promise<boolean> {
    let record: Record<string, unknown> | undefined;
    try {
      record = await this.#readRecord(id);
    } catch (err) {
      // A corrupt or newer record may be replaced by a valid save; only a resolved one may not.
      if (!ContinuationError.is(err) || err.code === 'unavailable') throw err;
      return this.#exists(id + MARK);
    }
    return record?.resolved === true || this.#exists(id + MARK);
  }

  /** The decoded record, or undefined when there is none. */
  async #read(id: string): Promise<Suspension | undefined> {
    const record = await this.#readRecord(id);
    return record === undefined ? undefined : this.#decode(id, record);
  }

  #decode(id: string, record: Record<string, unknown>): Suspension {
    const s = decodeSuspension(record, { owned: true });
    if (s.interactionId !== id) throw this.#otherId(id, s.interactionId);
    return s;
  }

  /** Writes `text` to a new flushed temp file for `name`, creating the folder when missing. */
  async #writeTemp(name: string, text: string): Promise<string> {
    try {
      return await writeTemp(this.directory, name, text, this.#fsync);
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
      await mkdir(this.directory, { recursive: true });
      return writeTemp(this.directory, name, text, this.#fsync);
    }
  }

  #otherId(id: string, held: unknown): ContinuationError {
    return new ContinuationError(
      'invalid',
      `record ${join(this.directory, id + RECORD)} holds interaction_id ${JSON.stringify(held)}, not "${id}"`,
      { interactionId: id, field: 'interaction_id' },
    );
  }

  /**
   * The record as a JSON object of the version this code reads, or undefined when there
   * is none. The rest is not checked: {@link decodeSuspension} does.
   */
  async #readRecord(id: string): Promise<Record<string, unknown> | undefined> {
    const text = await this.#readText(id);
    return text === undefined ? undefined : this.#parseRecord(id, text);
  }

  /** The text of `<id>.json`, or undefined when there is none; one over the limit is refused unread. */
  async #readText(id: string): Promise<string | undefined> {
    const path = join(this.directory, id + RECORD);
    let text: string;
    try {
      const handle = await open(path, 'r');
      try {
        const { size } = await handle.stat();
        if (size > this.#maxRecordBytes) {
          throw new ContinuationError(
            'invalid',
            `record ${path} is ${size} bytes, over the limit of ${this.#maxRecordBytes}: raise maxRecordBytes if it is genuine`,
            { interactionId: id, field: '(record)' },
          );
        }
        text = await readAll(handle, size);
      } finally {
        await handle.close();
      }
    } catch (err) {
      if (ContinuationError.is(err)) throw err;
      if (isErrno(err, 'ENOENT')) return undefined;
      throw unavailable(`read ${path}`, id, err);
    }
    return text;
  }

  /** `text` parsed as a record of the version this code reads. */
  #parseRecord(id: string, text: string): Record<string, unknown> {
    const path = join(this.directory, id + RECORD);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new ContinuationError(
        'invalid',
        `record ${path} is not valid JSON (${(err as Error).message}): restore it from a backup or delete it`,
        { interactionId: id, field: '(record)', cause: err },
      );
    }
    return checkRecordVersion(json);
  }
}

/**
 * Where an interactive session's continuations live: `<root>/<sessionId>/continuations`.
 *
 * @throws {ContinuationError} `unsafe_id` when `sessionId` is not a safe file name.
 * @example
 * const store = new FileContinuationStore(sessionDir('/var/lib/agent', 'sess-1'));
 */
export function sessionDir(root: string, sessionId: string): string {
  assertSafeId('session id', sessionId);
  return join(root, sessionId, 'continuations');
}
