import { once } from 'node:events';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { FileContinuationStore, sessionDir } from '@x/continuation/file';
import { randomHolderKey } from '@x/continuation-postgres';
import { FileCheckpointStore } from '@x/session/file';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { RunnerError } from '../errors.js';
import { lockDataFolder } from './data-lock.js';
import { type AuditHolder, type Db, type Storage, sqlStores } from './stores.js';
import { forgetServing, recordServing } from './via-serve.js';

/** The embedded database's buffer cache: PGlite serves one process (see openEmbedded). */
const SHARED_BUFFERS = '32MB';

/** PGlite's start parameters for the embedded database (the bench opens bare PGlite alike). */
export const EMBEDDED_START_PARAMS = [
  ...PGlite.defaultStartParams,
  '-c',
  `shared_buffers=${SHARED_BUFFERS}`,
];

/**
 * Creates the PGlite data folder `dir` in a thread of its own: initdb grows PGlite's
 * WebAssembly memory to about 600 MB, which an instance never gives back, so the process
 * that goes on to serve must not be the one that ran it.
 */
async function createPgliteFolder(dir: string): Promise<void> {
  const pglite = pathToFileURL(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  const worker = new Worker(
    `const { workerData } = require('node:worker_threads');
     import(workerData.pglite).then(async ({ PGlite }) => {
       const client = new PGlite(workerData.dir, { startParams: workerData.startParams });
       await client.waitReady;
       await client.close();
     });`,
    { eval: true, workerData: { pglite: pglite.href, dir, startParams: EMBEDDED_START_PARAMS } },
  );
  await once(worker, 'exit');
}

/** One line for a file-system error of the data folder, with its code (EACCES, ...). */
function folderProblem(dir: string, error: unknown): RunnerError {
  const { code, path: where = dir } = error as NodeJS.ErrnoException;
  const reasons: Record<string, string> = {
    EACCES: `permission denied on ${where}`,
    EPERM: `permission denied on ${where}`,
    EEXIST: `${where} is a file, not a folder`,
    ENOTDIR: `a parent of ${where} is a file, not a folder`,
    ENOENT: `no folder can be created at ${where}`,
    EROFS: `${where} is on a read-only file system`,
    ENOSPC: 'no space left on the device',
  };
  const reason = (code && reasons[code]) ?? (error as Error).message;
  return new RunnerError('unavailable', `cannot use the data folder ${dir}: ${reason}`, {
    cause: error,
  });
}

// Creates the folder and its missing parents one level at a time: Node's recursive mkdir
// loops forever where mkdir reports ENOENT under an existing parent (e.g. /proc/nope).
function makeFolder(dir: string): void {
  try {
    if (statSync(dir).isDirectory()) return;
    throw Object.assign(new Error(`${dir} is not a folder`), { code: 'EEXIST', path: dir });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const parent = path.dirname(dir);
  if (parent !== dir) makeFolder(parent);
  try {
    mkdirSync(dir);
  } catch (error) {
    // Another process starting at the same moment made it first.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(dir).isDirectory()) {
      throw error;
    }
  }
}

/** Opens the embedded default: PGlite and files in the data folder, which it locks. */
export async function openEmbedded(
  dataDir: string,
  command: string,
  audit: AuditHolder,
): Promise<Storage> {
  const dir = path.resolve(dataDir);
  let release: () => void;
  try {
    makeFolder(dir);
    release = lockDataFolder(dir, command);
    // A serve that was killed left its socket: whoever holds the lock now clears it; a serve
    // says at once that it is starting, so that commands of other terminals wait for it.
    if (command === 'serve') recordServing(dir, 'starting');
    else forgetServing(dir);
  } catch (error) {
    if (RunnerError.is(error) || typeof (error as NodeJS.ErrnoException).code !== 'string')
      throw error;
    throw folderProblem(dir, error);
  }
  try {
    // A command is a short process: optimising PGlite's WebAssembly costs more CPU than it
    // saves (a start of `runs` takes about 40% less), so its baseline code is kept.
    setFlagsFromString('--liftoff-only');
    const pgliteDir = path.join(dir, 'pglite');
    if (!existsSync(path.join(pgliteDir, 'PG_VERSION'))) await createPgliteFolder(pgliteDir);
    // initdb's 128 MB of shared buffers are zeroed at every start (a fifth of PGlite's
    // start-up): one process's store works in far less.
    const client = new PGlite(pgliteDir, { startParams: EMBEDDED_START_PARAMS });
    await client.waitReady;
    const db = drizzlePglite({ client }) as unknown as Db;
    // Whoever held the folder's lock before has ended: every lease but this key's is gone.
    const holder = randomHolderKey();
    return {
      kind: 'embedded',
      where: dir,
      // PGlite has no WAL writer: an asynchronous claim would die with its process.
      ...sqlStores(db, audit, { synchronousClaim: true }),
      leaseHolder: async () => holder,
      chatContinuations: (sessionId) =>
        new FileContinuationStore(sessionDir(path.join(dir, 'chats'), sessionId)),
      checkpoints: new FileCheckpointStore(path.join(dir, 'sessions')),
      async close() {
        try {
          await client.close();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}
