// The wake's peak memory: on PostgreSQL and on the embedded default, in a fresh process and
// in a long-lived one, each in a child process of its own (see wake-memory.ts).
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Message } from '@x/wire';
import type { Storage } from 'runner/dist/storage/index.js';
import { kb } from './bench-continuation.js';
import type { Context, Server } from './context.js';
import { statsOf } from './measure.js';
import { answer, benchStorage, sized, suspendTurn } from './runner-cycle.js';
import type { WakeMemory } from './wake-memory.js';

const run = promisify(execFile);

/**
 * One run of the memory child (`wake` or `read`, see wake-memory.ts) over `tokens`, in a
 * process of its own: the largest lift of the peak among those after the first `warmUps`.
 */
async function memoryChild(mode: 'wake' | 'read', source: string, tokens: string[], warmUps = 0) {
  const child = fileURLToPath(new URL('./wake-memory.js', import.meta.url));
  const { stdout } = await run(process.execPath, ['--expose-gc', child, mode, source, ...tokens], {
    maxBuffer: 1024 * 1024,
  });
  const each = JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]') as WakeMemory[];
  const lifted = each.slice(warmUps).map((m) => ({ ...m, over: m.peakRss - m.baselineRss }));
  return lifted.reduce((most, m) => (m.over > most.over ? m : most));
}

type Measured = Awaited<ReturnType<typeof memoryChild>>;

function median(measured: Measured[]): Measured {
  const sorted = [...measured].sort((a, b) => a.over - b.over);
  return sorted[Math.floor(sorted.length / 2)] as Measured;
}

const each = (measured: Measured[]) => measured.map((m) => kb(m.over)).join(', ');

const bound = (m: Measured) =>
  m.peakReset ? '' : 'the peak could not be reset (not Linux), so this is an upper bound; ';

// Peak RSS depends on when the collector happens to run: identical wakes differ by MBs, so
// a row is the median of several, each in its own process.
export async function benchMemory(ctx: Context, server: Server): Promise<void> {
  const storage = await benchStorage(ctx.tmp, server.url);
  try {
    await wakeMemory(ctx, storage, server);
  } finally {
    await storage.close();
  }
  await serveStartMemory(ctx);
}

const cli = fileURLToPath(import.meta.resolve('runner/dist/cli.js'));

/** RSS of `runner serve` on the embedded default in `dataDir`, read once it announced itself. */
async function serveRss(dataDir: string): Promise<number> {
  const child = spawn(process.execPath, [cli, 'serve', '--data', dataDir, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    let out = '';
    for await (const chunk of child.stdout) {
      out += chunk;
      if (out.includes('http://')) break;
    }
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
    if (rss === undefined) throw new Error(`runner serve printed no address: ${out}`);
    return Number(rss) * 1024;
  } finally {
    child.kill('SIGINT');
    await once(child, 'exit');
  }
}

/** RSS of a process that opened bare PGlite on the folder as the embedded default does. */
async function barePgliteRss(dataDir: string): Promise<number> {
  const child = fileURLToPath(new URL('./wake-memory.js', import.meta.url));
  const { stdout } = await run(process.execPath, ['--expose-gc', child, 'open', dataDir]);
  return Number(stdout.trim().split('\n').at(-1));
}

/**
 * `runner serve`'s memory once it listens, on a new data folder (which it creates) and on one
 * it created before, against bare PGlite opening that folder in a process of its own.
 */
async function serveStartMemory(ctx: Context): Promise<void> {
  const fresh: number[] = [];
  const again: number[] = [];
  const bare: number[] = [];
  for (let k = 0; k < (ctx.quick ? 1 : 3); k++) {
    const dataDir = path.join(ctx.tmp, `serve-memory-${k}`);
    fresh.push(await serveRss(dataDir));
    again.push(await serveRss(dataDir));
    bare.push(await barePgliteRss(dataDir));
  }
  const mb = (bytes: number) => `${Math.round(bytes / 1048576)} MB`;
  ctx.add({
    section: 'memory',
    name: `serve's memory at start on the embedded default: ${mb(statsOf(fresh).median)} on a new folder, ${mb(statsOf(again).median)} on an existing one, vs bare PGlite ${mb(statsOf(bare).median)}`,
    goal: { kind: 'at-most', value: 2.5, label: '≤ 2.5×' },
    ratio: statsOf(fresh).median / statsOf(bare).median,
    ratioMeaning: 'RSS on a new folder, serve/bare PGlite',
    extra: { fresh, again, bare },
    note: `RSS once serve printed its address (medians of ${fresh.length}); a new folder's initdb runs in a thread of its own, since the WebAssembly memory it grows (about 600 MB) is never given back`,
  });
}

async function wakeMemory(ctx: Context, storage: Storage, server: Server): Promise<void> {
  const input = sized(10_000);
  const transcriptBytes = Buffer.byteLength(JSON.stringify(input.messages));
  const wakes: Measured[] = [];
  for (let k = 0; k < (ctx.quick ? 1 : 5); k++) {
    const token = randomUUID();
    await suspendTurn(storage, token, `conv-memory-${token}`, input.messages);
    await answer(storage, token);
    wakes.push(await memoryChild('wake', server.url, [token]));
  }
  const m = median(wakes);
  ctx.add({
    section: 'memory',
    name: `wake peak memory, 10,000 msgs (${kb(transcriptBytes)} JSON): +${kb(m.over)} RSS, median of ${wakes.length}`,
    goal: { kind: 'at-most', value: 5, label: '≤ 5× JSON' },
    ratio: m.over / transcriptBytes,
    ratioMeaning: 'peak RSS over baseline / JSON',
    extra: { ...m, transcriptBytes, eachOver: wakes.map((w) => w.over) },
    note: `${bound(m)}the record arrives as one string and is parsed whole: the text and the parsed transcript are alive together (each wake: ${each(wakes)})`,
  });
  await embeddedWakeMemory(ctx, input.messages, transcriptBytes);
  await longLivedWakeMemory(ctx, input.messages);
}

/** Runs on the embedded default in `dataDir`, suspended and answered in order, one per token. */
async function answeredRuns(
  dataDir: string,
  messages: Message[],
  count: number,
): Promise<string[]> {
  const tokens = Array.from({ length: count }, () => randomUUID());
  // PGlite is one process's database: the folder is closed before a child opens it.
  const embedded = await benchStorage(dataDir);
  try {
    for (const token of tokens) {
      await suspendTurn(embedded, token, `conv-memory-${token}`, messages);
      await answer(embedded, token);
    }
  } finally {
    await embedded.close();
  }
  return tokens;
}

/** The same wake on the embedded default, against bare PGlite reading the same record. */
async function embeddedWakeMemory(
  ctx: Context,
  messages: Message[],
  transcriptBytes: number,
): Promise<void> {
  const dataDir = path.join(ctx.tmp, 'wake-memory-embedded');
  const wakes: Measured[] = [];
  const reads: Measured[] = [];
  for (let k = 0; k < (ctx.quick ? 1 : 5); k++) {
    const [token = ''] = await answeredRuns(dataDir, messages, 1);
    wakes.push(await memoryChild('wake', dataDir, [token]));
    reads.push(await memoryChild('read', dataDir, [token]));
  }
  const m = median(wakes);
  const floor = median(reads);
  ctx.add({
    section: 'memory',
    name: `wake peak memory on the embedded default, a fresh process, 10,000 msgs: +${kb(m.over)} RSS, median of ${wakes.length}`,
    goal: { kind: 'info', label: '-' },
    ratio: m.over / transcriptBytes,
    ratioMeaning: 'peak RSS over baseline / JSON',
    extra: {
      ...m,
      transcriptBytes,
      eachOver: wakes.map((w) => w.over),
      bareReadOver: reads.map((r) => r.over),
    },
    note: `${bound(m)}bare PGlite reading and parsing the same record in a fresh process peaks at ${(floor.over / transcriptBytes).toFixed(2)}× (median; each: ${each(reads)}): a fresh process grows PGlite's WebAssembly heap to read the record, by how much depends on what start-up left free (each wake: ${each(wakes)})`,
  });
}

/**
 * Wakes on the embedded default in a long-lived process (what `runner serve` is: wakes after
 * earlier ones), against bare PGlite reading and parsing the same records in a process of its
 * own; each process's figure is its largest lift among the wakes after its warm-ups.
 */
async function longLivedWakeMemory(ctx: Context, messages: Message[]): Promise<void> {
  const dataDir = path.join(ctx.tmp, 'wake-memory-long-lived');
  const warmUps = ctx.quick ? 1 : 2;
  const measured = ctx.quick ? 2 : 3;
  const wakes: Measured[] = [];
  const reads: Measured[] = [];
  for (let k = 0; k < (ctx.quick ? 1 : 3); k++) {
    const tokens = await answeredRuns(dataDir, messages, warmUps + measured);
    wakes.push(await memoryChild('wake', dataDir, tokens, warmUps));
    reads.push(await memoryChild('read', dataDir, tokens, warmUps));
  }
  const m = median(wakes);
  const floor = median(reads);
  ctx.add({
    section: 'memory',
    name: `wake peak memory on the embedded default, a long-lived process, 10,000 msgs: +${kb(m.over)} RSS vs bare PGlite +${kb(floor.over)}`,
    goal: { kind: 'at-most', value: 1.5, label: '≤ 1.5×' },
    ratio: m.over / floor.over,
    ratioMeaning: 'peak RSS over baseline, ours/bare',
    extra: {
      ...m,
      warmUps,
      measured,
      bare: floor,
      eachOver: wakes.map((w) => w.over),
      bareReadOver: reads.map((r) => r.over),
    },
    note: `${bound(m)}each process wakes (or, bare, reads and parses) ${warmUps} run${warmUps === 1 ? '' : 's'} of the same size first, then ${measured} measured, each after a GC and a reset of the peak; a process's figure is its largest lift over its settled RSS (memory kept from earlier wakes is reused, not counted: baselines ${kb(m.baselineRss)} ours, ${kb(floor.baselineRss)} bare), the row the median of ${wakes.length} processes (each wake: ${each(wakes)}; each bare read: ${each(reads)})`,
  });
}
