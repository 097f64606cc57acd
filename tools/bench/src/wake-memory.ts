// Child process of the memory rows; prints one JSON line: an array, one entry per token.
// `wake SOURCE TOKEN...` opens the runner's storage (SOURCE is a server URL or the embedded
// default's data folder), then for each token in turn settles and measures how far its wake
// (claim, load, resume a 10,000-message transcript, model, mark resolved) lifts the peak
// RSS; after the first, the process is a long-lived one (what `runner serve` is).
// `read DATA_DIR TOKEN...` is the embedded default's floor: bare PGlite reads the same
// records and JSON.parse parses them, each measured the same way.
// `open DATA_DIR` is the floor of serve's memory at start: bare PGlite opens the folder as the
// embedded default does, and its RSS is printed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PGlite } from '@electric-sql/pglite';
import { EMBEDDED_START_PARAMS } from 'runner/dist/storage/embedded.js';
import { openStorage } from 'runner/dist/storage/index.js';
import { wakeOnce } from './runner-cycle.js';

/** What one child measured: its RSS before the step and its peak RSS during it. */
export interface WakeMemory {
  baselineRss: number;
  peakRss: number;
  /** False where the peak could not be reset (not Linux): the peak may then predate the step. */
  peakReset: boolean;
}

const gc = (globalThis as { gc?: () => void }).gc;

/** Peak RSS: Linux's high-water mark, which `clear_refs` can reset; elsewhere max RSS. */
function peakRss(): number {
  try {
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (hwm !== undefined) return Number(hwm) * 1024;
  } catch {
    // No /proc (not Linux): the process's max RSS below.
  }
  return process.resourceUsage().maxRSS * 1024;
}

/** Collects, then resets the peak to the current RSS (Linux 4.0+, writing 5 to clear_refs). */
function settle(): boolean {
  gc?.();
  gc?.();
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

async function measure(step: () => Promise<unknown>): Promise<WakeMemory> {
  const peakReset = settle();
  const baselineRss = process.memoryUsage().rss;
  await step();
  return { baselineRss, peakRss: peakRss(), peakReset };
}

async function wake(source: string, tokens: string[]): Promise<WakeMemory[]> {
  const server = /^postgres(ql)?:/.test(source);
  const dataDir = server ? mkdtempSync(path.join(tmpdir(), 'x-bench-wake-')) : source;
  const storage = await openStorage({
    dataDir,
    ...(server ? { databaseUrl: source } : {}),
    command: 'bench',
    log: () => {},
  });
  try {
    await storage.pauses().listPendingAll(1); // connection open, statements warm
    const measured: WakeMemory[] = [];
    for (const token of tokens) measured.push(await measure(() => wakeOnce(storage, token)));
    return measured;
  } finally {
    await storage.close();
    if (server) rmSync(dataDir, { recursive: true, force: true });
  }
}

async function read(dataDir: string, tokens: string[]): Promise<WakeMemory[]> {
  const db = await PGlite.create(path.join(dataDir, 'pglite'));
  const parsed = async (interactionId: string) => {
    const { rows } = await db.query<{ record: string }>(
      'select record from x_continuation.suspensions where interaction_id = $1',
      [interactionId],
    );
    const [row] = rows;
    if (!row) throw new Error(`no record ${interactionId}`);
    return JSON.parse(row.record);
  };
  try {
    await db.query('select 1');
    const measured: WakeMemory[] = [];
    for (const token of tokens) measured.push(await measure(() => parsed(token)));
    return measured;
  } finally {
    await db.close();
  }
}

/** RSS of a process that opened the embedded default's PGlite on `dataDir` and nothing else. */
async function open(dataDir: string): Promise<number> {
  setFlagsFromString('--liftoff-only');
  const db = await PGlite.create(path.join(dataDir, 'pglite'), {
    startParams: EMBEDDED_START_PARAMS,
  });
  try {
    await db.query('select 1');
    gc?.();
    return process.memoryUsage().rss;
  } finally {
    await db.close();
  }
}

const [mode, source, ...tokens] = process.argv.slice(2);
if (mode === 'open' && source) {
  console.log(JSON.stringify(await open(source)));
  process.exit(0);
}
if ((mode !== 'wake' && mode !== 'read') || !source || tokens.length === 0) {
  throw new Error(
    'usage: wake-memory.js wake DATABASE_URL|DATA_DIR TOKEN... | read DATA_DIR TOKEN... | open DATA_DIR',
  );
}
if (!gc) throw new Error('run with --expose-gc');
console.log(JSON.stringify(await (mode === 'wake' ? wake : read)(source, tokens)));
