import { link, mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { checkRecordVersion, decodeSuspension } from '../codec.js';
import { ContinuationError } from '../errors.js';
import { alreadyResolved, notFound } from '../memory.js';
import {
  type ContinuationStore,
  compareSuspensions,
  DEFAULT_MAX_RECORD_BYTES,
  type ListUnresolvedFilter,
  matchesFilter,
  prepareSave,
} from '../store.js';
import type { Suspension } from '../suspension.js';
import { isTempName, syncDir, writeAtomic, writeTemp } from './durable.js';
import { assertSafeId } from './safe-id.js';

/** Options of {@link FileContinuationStore}. */
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

function isErrno(err: unknown, code: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === code;
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
 * `<interactionId>.json` holds the record (the snake_case JSON of the earlier Go
 * implementation), and `<interactionId>.resolved` marks it consumed.
 *
 * - Writes are atomic and durable (temp file in the folder, fsync, rename, fsync the
 *   folder); a crash never leaves a truncated record, and stray temp files (hidden
 *   `.*.tmp`) are ignored.
 * - `markResolved` is exactly-once across processes: the resolved record is written to a
 *   temp file and hard-linked to `<id>.resolved`; `link` fails with `EEXIST` for every
 *   loser. The same file is then renamed over `<id>.json`, so readers of the record alone
 *   (the Go implementation) see `"resolved": true` too. A record counts as resolved when
 *   either says so; a crash between the two steps leaves it resolved, never loadable.
 * - Ids become file names, so they are validated first (`unsafe_id`). On a case-insensitive
 *   file system, ids differing only in case are the same record.
 *
 * @example
 * import { FileContinuationStore, sessionDir } from '@x/continuation/file';
 * const store = new FileContinuationStore(sessionDir(dataDir, sessionId));
 * await store.save(suspension);
 */
export class FileContinuationStore implements ContinuationStore {
  /** The folder holding the records. */
  readonly dir: string;
  readonly #maxRecordBytes: number;
  readonly #fsync: boolean;

  constructor(dir: string, options: FileContinuationStoreOptions = {}) {
    this.dir = dir;
    this.#maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
    this.#fsync = options.fsync ?? true;
  }

  async save(suspension: Suspension): Promise<void> {
    // A path-like id is named as such (an empty or missing one is left to the schema check).
    const given: unknown = (suspension as { interactionId?: unknown } | null)?.interactionId;
    if (typeof given === 'string' && given !== '') assertSafeId('interaction id', given);
    const { suspension: s, text } = prepareSave(suspension, this.#maxRecordBytes);
    const id = s.interactionId;
    try {
      await mkdir(this.dir, { recursive: true });
      if (await this.#isResolved(id)) throw alreadyResolved(id);
      await writeAtomic(this.dir, id + RECORD, text, this.#fsync);
      // A markResolved that slipped in between the check and the rename wins: the record
      // reads as resolved whatever this write put in `<id>.json`, so report it.
      if (await this.#exists(id + MARK)) throw alreadyResolved(id);
    } catch (err) {
      if (ContinuationError.is(err)) throw err;
      throw unavailable(`save interaction "${id}" in ${this.dir}`, id, err);
    }
  }

  async load(interactionId: string): Promise<Suspension> {
    assertSafeId('interaction id', interactionId);
    if (await this.#exists(interactionId + MARK)) throw alreadyResolved(interactionId);
    const s = await this.#read(interactionId);
    if (s === undefined) throw notFound(interactionId);
    if (s.resolved) throw alreadyResolved(interactionId);
    return s;
  }

  async markResolved(interactionId: string): Promise<void> {
    assertSafeId('interaction id', interactionId);
    const id = interactionId;
    if (await this.#exists(id + MARK)) throw alreadyResolved(id);
    // Only the flag changes, so the record is not decoded whole (load and listUnresolved
    // parse it through the schema): its version and id are checked, the rest is kept as is.
    const record = await this.#readRecord(id);
    if (record === undefined) throw notFound(id);
    if (record.interaction_id !== id) throw this.#otherId(id, record.interaction_id);
    if (record.resolved === true) throw alreadyResolved(id);
    if (record.resolved !== false) {
      throw new ContinuationError('invalid', 'suspension record resolved: expected a boolean', {
        interactionId: id,
        field: 'resolved',
      });
    }
    const text = JSON.stringify({ ...record, resolved: true });
    try {
      const temp = await writeTemp(this.dir, id + MARK, text, this.#fsync);
      try {
        await link(temp, join(this.dir, id + MARK));
      } catch (err) {
        await unlink(temp).catch(() => {});
        if (isErrno(err, 'EEXIST')) throw alreadyResolved(id);
        throw err;
      }
      await rename(temp, join(this.dir, id + RECORD));
      if (this.#fsync) await syncDir(this.dir);
    } catch (err) {
      if (ContinuationError.is(err)) throw err;
      throw unavailable(`mark interaction "${id}" resolved in ${this.dir}`, id, err);
    }
  }

  async listUnresolved(filter?: ListUnresolvedFilter): Promise<Suspension[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return [];
      throw unavailable(`list ${this.dir}`, undefined, err);
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
      await stat(join(this.dir, name));
      return true;
    } catch (err) {
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return false;
      throw unavailable(`check ${join(this.dir, name)}`, undefined, err);
    }
  }

  async #isResolved(id: string): Promise<boolean> {
    if (await this.#exists(id + MARK)) return true;
    try {
      return (await this.#read(id))?.resolved ?? false;
    } catch (err) {
      // A corrupt or newer record may be replaced by a valid save; only a resolved one may not.
      if (ContinuationError.is(err) && err.code !== 'unavailable') return false;
      throw err;
    }
  }

  /** The decoded record, or undefined when there is none. */
  async #read(id: string): Promise<Suspension | undefined> {
    const record = await this.#readRecord(id);
    if (record === undefined) return undefined;
    const s = decodeSuspension(record, { owned: true });
    if (s.interactionId !== id) throw this.#otherId(id, s.interactionId);
    return s;
  }

  #otherId(id: string, held: unknown): ContinuationError {
    return new ContinuationError(
      'invalid',
      `record ${join(this.dir, id + RECORD)} holds interaction_id ${JSON.stringify(held)}, not "${id}"`,
      { interactionId: id, field: 'interaction_id' },
    );
  }

  /**
   * The record as a JSON object of the version this code reads, or undefined when there
   * is none. The rest is not checked: {@link decodeSuspension} does.
   */
  async #readRecord(id: string): Promise<Record<string, unknown> | undefined> {
    const path = join(this.dir, id + RECORD);
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
        text = await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    } catch (err) {
      if (ContinuationError.is(err)) throw err;
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return undefined;
      throw unavailable(`read ${path}`, id, err);
    }
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
    const record = checkRecordVersion(json);
    return record;
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
