import { linkSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { RunnerError } from '../errors.js';

/** Who holds a data folder, as its lock file names them. */
interface LockHolder {
  pid: number;
  command: string;
  since: string;
}

/** True while process `pid` lives (one of another user counts as alive). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The holder of the data folder `dir`'s lock, if it is locked (alive or not). */
export function lockHolder(dir: string): LockHolder | undefined {
  return readHolder(path.join(dir, 'runner.lock'));
}

function readHolder(file: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
}

/**
 * Locks the data folder `dir` for this process (`command` names it to a second one) and
 * returns the release. PGlite is one process's database: a second process opening the same
 * folder would corrupt it, so the folder is locked with a file naming the holder. The holder
 * is written to a file of its own and then hard-linked as the lock, so that the lock appears
 * whole or not at all: a process starting at the same moment never reads a half-written lock.
 */
export function lockDataFolder(dir: string, command: string): () => void {
  const file = path.join(dir, 'runner.lock');
  const holder: LockHolder = { pid: process.pid, command, since: new Date().toISOString() };
  const draft = path.join(dir, `runner.lock.${process.pid}`);
  writeFileSync(draft, JSON.stringify(holder));
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      try {
        linkSync(draft, file);
        const release = () => {
          // A process that opens and closes the folder many times (a bench) adds no listeners.
          process.off('exit', release);
          if (readHolder(file)?.pid === process.pid) rmSync(file, { force: true });
        };
        process.once('exit', release);
        return release;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const current = readHolder(file);
      if (current && alive(current.pid)) {
        throw new RunnerError(
          'unavailable',
          `the data folder ${dir} is in use by \`runner ${current.command}\` (pid ${current.pid}, since ${current.since}). ` +
            'Stop that process, use another --data folder, or set DATABASE_URL so that several processes share one PostgreSQL.',
        );
      }
      removeStaleLock(file, current);
    }
  } finally {
    rmSync(draft, { force: true });
  }
  throw new RunnerError('unavailable', `could not lock the data folder ${dir}`);
}

// A lock whose holder died is removed by one process at a time (the one that creates
// `runner.lock.break`), and only while it still names that dead holder: two processes that
// found the same stale lock never remove the fresh lock of a third.
function removeStaleLock(file: string, stale: LockHolder | undefined): void {
  const breaker = `${file}.break`;
  try {
    writeFileSync(breaker, String(process.pid), { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // A breaker that died in those few statements: its file is old; anyone may remove it.
    const made = statSync(breaker, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
    if (Date.now() - made > 10_000) rmSync(breaker, { force: true });
    // Another process is removing it: let it finish before looking again.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    return;
  }
  try {
    const current = readHolder(file);
    if (JSON.stringify(current) === JSON.stringify(stale)) rmSync(file, { force: true });
  } finally {
    rmSync(breaker, { force: true });
  }
}
