import { mkdir, readdir, readFile, stat, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import {
  MAX_CHECKPOINT_BYTES,
  parseCheckpoint,
  type SessionCheckpoint,
  serializeCheckpoint,
} from '../checkpoint.js';
import {
  assertSafeThreadId,
  type CheckpointStore,
  type CheckpointSummary,
  conflictError,
  type DeleteOptions,
  isSafeThreadId,
  normaliseExpected,
  type PutOptions,
  type StoredCheckpoint,
} from '../checkpoint-store.js';
import { SessionError } from '../errors.js';
import { optionOf } from '../guard.js';
import { isTempName, linkTemp, syncDir, writeTemp } from './durable.js';

/** Version of the per-revision file envelope (the checkpoint inside has its own). */
const FILE_RECORD_VERSION = 1;

/** Options of {@link FileCheckpointStore} (the folder is the first argument). */
export interface FileCheckpointStoreOptions {
  /**
   * Temp files older than this (left by a crash between write and link) are removed by
   * later writes to the same thread. Default 10 minutes.
   */
  staleTempMs?: number;
  /**
   * Flush files and folders to disk on every write. Default `true`. Turning it off keeps
   * writes atomic (never half-written) but a power loss may then undo recent ones.
   */
  fsync?: boolean;
}

interface Latest {
  revision: number;
  deleted: boolean;
}

const REVISION_FILE = /^([1-9][0-9]{0,15})\.json$/;
// Temp files of @x/session 0.1 were named `.tmp-<pid>-<hex>`; a crash may have left some.
const OLD_TEMP_PREFIX = '.tmp-';

function unavailable(what: string, cause: unknown): SessionError {
  return new SessionError(
    'unavailable',
    `${what} failed: check the folder's permissions and free space`,
    { cause },
  );
}

function errnoCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error
    ? String(error.code)
    : undefined;
}

/**
 * A {@link CheckpointStore} on the local file system, safe across processes. Each thread is
 * a folder of revision files `<revision>.json`; a write hard-links a flushed temp file to
 * the next revision's name, and `link` fails if another writer took it, so the revision
 * check is atomic across processes without a lock. Older revision files are emptied, never
 * removed: a freed name could be linked again by a very late writer. A crash leaves at most
 * a temp file, which is never read and swept later.
 *
 * @example
 * import { FileCheckpointStore } from '@x/session/file';
 * const store = new FileCheckpointStore('./data/sessions');
 * const revision = await store.put('thread-1', checkpoint);
 */
export class FileCheckpointStore implements CheckpointStore {
  /** The folder holding one sub-folder per thread; created on the first write. */
  readonly directory: string;
  readonly #staleTempMs: number;
  readonly #fsync: boolean;

  /**
   * @param directory the folder holding one sub-folder per thread; created on the first write.
   */
  constructor(directory: string, options?: FileCheckpointStoreOptions);
  /** @deprecated Pass the folder first: `new FileCheckpointStore(directory, options)`. */
  constructor(options: FileCheckpointStoreOptions & { directory: string });
  constructor(
    first: string | (FileCheckpointStoreOptions & { directory: string }),
    options: FileCheckpointStoreOptions = {},
  ) {
    const given = typeof first === 'string' ? { ...options, directory: first } : first;
    this.directory = given.directory;
    this.#staleTempMs = given.staleTempMs ?? 10 * 60_000;
    this.#fsync = given.fsync ?? true;
  }

  async get(threadId: string): Promise<StoredCheckpoint | undefined> {
    assertSafeThreadId(threadId);
    const dir = join(this.directory, threadId);
    // A concurrent writer may prune the file we picked; the newer one is then listed.
    for (let attempt = 0; ; attempt++) {
      const latest = await this.#latest(dir);
      if (latest === null || latest.deleted) return undefined;
      let text: string;
      try {
        text = await readFile(join(dir, `${latest.revision}.json`), 'utf8');
      } catch (error) {
        if (errnoCode(error) === 'ENOENT' && attempt < 20) continue;
        throw unavailable(`reading thread "${threadId}"`, error);
      }
      // Emptied by a newer write between our listing and our read: list again.
      if (text === '' && attempt < 20) continue;
      const record = parseRecord(text, threadId);
      if (record.revision !== latest.revision || record.threadId !== threadId) {
        throw new SessionError(
          'invalid',
          `${latest.revision}.json of thread "${threadId}" holds revision ${record.revision} of thread "${record.threadId}": the file was copied or edited by hand`,
        );
      }
      if (record.checkpoint === null) return undefined;
      return {
        threadId,
        revision: record.revision,
        checkpoint: parseCheckpoint(record.checkpoint),
      };
    }
  }

  async put(
    threadId: string,
    checkpoint: SessionCheckpoint,
    options: PutOptions = {},
  ): Promise<number> {
    assertSafeThreadId(threadId);
    const expected = normaliseExpected(optionOf(options, 'expectedRevision', 'put options'));
    const parsed = parseCheckpoint(checkpoint);
    const dir = join(this.directory, threadId);
    const latest = await this.#latest(dir);
    const live = latest === null || latest.deleted ? null : latest.revision;
    if (live !== expected) throw conflictError(threadId, expected, live);
    if (latest === null) await this.#ensureDir(dir);
    const next = (latest?.revision ?? 0) + 1;
    const body = `{"format":"x-session-file","version":${FILE_RECORD_VERSION},"threadId":${JSON.stringify(threadId)},"revision":${next},"checkpoint":${serializeCheckpoint(parsed)}}`;
    if (!(await this.#commit(dir, next, body))) {
      const now = await this.#latest(dir);
      throw conflictError(threadId, expected, now === null || now.deleted ? null : now.revision);
    }
    return next;
  }

  async delete(threadId: string, options: DeleteOptions = {}): Promise<boolean> {
    assertSafeThreadId(threadId);
    const given = optionOf(options, 'expectedRevision', 'delete options');
    const expected = given === undefined ? undefined : normaliseExpected(given);
    const dir = join(this.directory, threadId);
    for (let attempt = 0; ; attempt++) {
      const latest = await this.#latest(dir);
      const live = latest === null || latest.deleted ? null : latest.revision;
      if (expected !== undefined && live !== expected)
        throw conflictError(threadId, expected, live);
      if (latest === null || live === null) return false;
      const next = latest.revision + 1;
      const body = `{"format":"x-session-file","version":${FILE_RECORD_VERSION},"threadId":${JSON.stringify(threadId)},"revision":${next},"checkpoint":null}`;
      if (await this.#commit(dir, next, body)) return true;
      // Lost to a concurrent writer: a conditional delete is then stale; an unconditional
      // one tries again on the newer revision.
      if (expected !== undefined || attempt >= 50) {
        const now = await this.#latest(dir);
        throw conflictError(
          threadId,
          expected ?? live,
          now === null || now.deleted ? null : now.revision,
        );
      }
    }
  }

  async list(): Promise<CheckpointSummary[]> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return [];
      throw unavailable('listing threads', error);
    }
    const out: CheckpointSummary[] = [];
    for (const name of names.sort()) {
      if (!isSafeThreadId(name)) continue;
      const latest = await this.#latest(join(this.directory, name));
      if (latest !== null && !latest.deleted)
        out.push({ threadId: name, revision: latest.revision });
    }
    return out.sort((a, b) => (a.threadId < b.threadId ? -1 : a.threadId > b.threadId ? 1 : 0));
  }

  async #ensureDir(dir: string): Promise<void> {
    try {
      const created = await mkdir(dir, { recursive: true });
      // A new thread folder must survive a crash too: its parent's entry is fsynced.
      if (created !== undefined && this.#fsync) await syncDir(this.directory);
    } catch (error) {
      throw unavailable(`creating folder ${dir}`, error);
    }
  }

  /** The highest revision file of a thread folder and whether it is a tombstone. */
  async #latest(dir: string): Promise<Latest | null> {
    for (let attempt = 0; ; attempt++) {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if (errnoCode(error) === 'ENOENT') return null;
        throw unavailable(`listing ${dir}`, error);
      }
      const revision = highestIn(names);
      if (revision === 0) return null;
      let text: string;
      try {
        text = await readFile(join(dir, `${revision}.json`), 'utf8');
      } catch (error) {
        if (errnoCode(error) === 'ENOENT' && attempt < 20) continue;
        throw unavailable(`reading ${dir}`, error);
      }
      if (text === '' && attempt < 20) continue;
      return { revision, deleted: parseRecord(text, dir).checkpoint === null };
    }
  }

  /** Creates revision file `next` atomically; false when another writer created it first. */
  async #commit(dir: string, next: number, body: string): Promise<boolean> {
    const name = `${next}.json`;
    try {
      const temp = await writeTemp(dir, name, body, this.#fsync);
      if (!(await linkTemp(dir, temp, name, this.#fsync))) return false;
    } catch (error) {
      throw unavailable(`writing revision ${next} in ${dir}`, error);
    }
    await this.#prune(dir, next);
    return true;
  }

  /**
   * Empties the previous revision file and removes temp files a crash left behind. Old
   * revision files are emptied, never unlinked: a freed name could be linked again by a
   * writer whose check is far behind, which would let a stale write succeed.
   */
  async #prune(dir: string, keep: number): Promise<void> {
    if (keep > 1) await truncate(join(dir, `${keep - 1}.json`), 0).catch(() => {});
    const names = await readdir(dir).catch(() => [] as string[]);
    const now = Date.now();
    for (const name of names) {
      if (!isTempName(name) && !name.startsWith(OLD_TEMP_PREFIX)) continue;
      const info = await stat(join(dir, name)).catch(() => undefined);
      if (info !== undefined && now - info.mtimeMs > this.#staleTempMs) {
        await unlink(join(dir, name)).catch(() => {});
      }
    }
  }
}

function highestIn(names: readonly string[]): number {
  let revision = 0;
  for (const name of names) {
    const match = REVISION_FILE.exec(name);
    if (match) revision = Math.max(revision, Number(match[1]));
  }
  return revision;
}

interface FileRecord {
  threadId: unknown;
  revision: number;
  checkpoint: unknown;
}

// The record wraps the checkpoint in a few fields; anything much bigger was not written here.
const MAX_RECORD_BYTES = MAX_CHECKPOINT_BYTES + 1024;

function parseRecord(text: string, where: string): FileRecord {
  if (text.length > MAX_RECORD_BYTES) {
    throw new SessionError(
      'invalid',
      `checkpoint file in ${where} is over ${MAX_RECORD_BYTES} bytes: it was not written by this store`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new SessionError('invalid', `checkpoint file in ${where} is not valid JSON`, { cause });
  }
  if (typeof raw !== 'object' || raw === null) {
    throw new SessionError('invalid', `checkpoint file in ${where} is not a JSON object`);
  }
  const record = raw as {
    version?: unknown;
    threadId?: unknown;
    revision?: unknown;
    checkpoint?: unknown;
  };
  if (typeof record.version === 'number' && record.version > FILE_RECORD_VERSION) {
    throw new SessionError(
      'unsupported_version',
      `checkpoint file in ${where} has format version ${record.version}, newer than this @x/session (${FILE_RECORD_VERSION}): upgrade @x/session`,
      { details: { version: record.version } },
    );
  }
  if (
    record.version !== FILE_RECORD_VERSION ||
    typeof record.revision !== 'number' ||
    !('checkpoint' in record)
  ) {
    throw new SessionError('invalid', `checkpoint file in ${where} is not an @x/session record`);
  }
  return { threadId: record.threadId, revision: record.revision, checkpoint: record.checkpoint };
}
