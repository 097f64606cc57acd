// Kept byte-identical in @x/continuation and @x/session (check:imports compares them): the
// file stores of both families write the same way and name temp files the same way.
import { randomBytes } from 'node:crypto';
import { type FileHandle, link, open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Name of a temp file for `name`: hidden, so listings and reads never mistake it for data. */
export function tempName(name: string): string {
  return `.${name}.${randomBytes(6).toString('hex')}.tmp`;
}

/** True for a temp file a store writes (also a stray one left by a crash). */
export function isTempName(name: string): boolean {
  return name.startsWith('.') && name.endsWith('.tmp');
}

/** Writes `text` to a new temp file for `name` in `dir` and flushes it to disk; returns its path. */
export async function writeTemp(
  dir: string,
  name: string,
  text: string,
  fsync: boolean,
): Promise<string> {
  const path = join(dir, tempName(name));
  const handle = await open(path, 'wx');
  try {
    await handle.writeFile(text);
    if (fsync) await handle.sync();
  } catch (err) {
    await handle.close().catch(() => {});
    await unlink(path).catch(() => {});
    throw err;
  }
  await handle.close();
  return path;
}

/** Flushes a directory's entries (renames, links) to disk. */
export async function syncDir(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (err) {
    // Some platforms (Windows) cannot open or fsync a directory; the rename is still atomic there.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL') throw err;
  } finally {
    await handle?.close();
  }
}

/**
 * Moves a flushed temp file (from {@link writeTemp}) over `dir/name` and flushes the folder,
 * so that a crash at any point leaves either the old content or the new, never a mix.
 */
export async function commitTemp(
  dir: string,
  temp: string,
  name: string,
  fsync: boolean,
): Promise<void> {
  try {
    await rename(temp, join(dir, name));
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
  if (fsync) await syncDir(dir);
}

/**
 * Links a flushed temp file (from {@link writeTemp}) to `dir/name` only if no file has that
 * name, removes the temp file and flushes the folder. `false` when the name was taken: of
 * several writers creating one name, exactly one gets `true`, across processes.
 */
export async function linkTemp(
  dir: string,
  temp: string,
  name: string,
  fsync: boolean,
): Promise<boolean> {
  try {
    await link(temp, join(dir, name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(temp).catch(() => {});
  }
  if (fsync) await syncDir(dir);
  return true;
}

/**
 * Reads a whole file of a known `size` as UTF-8 in as few reads as the OS allows (files are
 * replaced by rename or link, never written in place, so the size of an open one is fixed).
 */
export async function readAll(handle: FileHandle, size: number): Promise<string> {
  const buffer = Buffer.allocUnsafe(size);
  let filled = 0;
  while (filled < size) {
    const { bytesRead } = await handle.read(buffer, filled, size - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.toString('utf8', 0, filled);
}
