import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { encodeSuspension } from '@x/continuation';
import { watching } from 'runner/dist/executive/index.js';
import { RunnerMetrics } from 'runner/dist/serve/metrics.js';
import { openStorage, type Storage } from 'runner/dist/storage/index.js';
import { startTracing } from 'runner/dist/telemetry/tracing.js';
import { kb, ratio } from './bench-continuation.js';
import type { Context, Server } from './context.js';
import { langGraphCycle } from './langgraph-cycle.js';
import { type Budget, measure, type Stats } from './measure.js';
import { answer, suspendTurn, wakeOnce } from './runner-cycle.js';
import { transcript } from './transcript.js';
import type { WakeMemory } from './wake-memory.js';

const run = promisify(execFile);

interface Sized {
  messages: Message[];
  /** The continuation record as stored: what the floor INSERT writes. */
  record: string;
}
type Message = ReturnType<typeof transcript>[number];

function sized(n: number): Sized {
  const messages = transcript(n);
  const assistant = messages.at(-1);
  if (assistant?.role !== 'assistant') throw new Error('bad transcript');
  const record = JSON.stringify(
    encodeSuspension({
      version: 1,
      interactionId: randomUUID(),
      sessionId: 'conv-bench',
      toolUseId: 'toolu_ask_0',
      toolName: 'ask_user',
      assistant,
      messages,
      createdAt: new Date(),
      resolved: false,
    }),
  );
  return { messages, record };
}

/** The runner's cycle and its floor (one INSERT of the transcript, one conditional UPDATE). */
function tasks(storage: Storage, server: Server, input: Sized) {
  let i = 0;
  return {
    floor: async () => {
      const id = randomUUID();
      await server.sql`insert into bench_floor (id, record) values (${id}, ${input.record})`;
      const won = await server.sql`
        update bench_floor set resolved = true where id = ${id} and not resolved returning id`;
      if (won.length !== 1) throw new Error('floor update lost its row');
    },
    cycle: async () => {
      const token = randomUUID();
      const conversation = `conv-${i++}`;
      await suspendTurn(storage, token, conversation, input.messages);
      await answer(storage, token);
      await wakeOnce(storage, token);
    },
  };
}

async function walBytes(server: Server, times: number, fn: () => Promise<unknown>) {
  const [start] = await server.sql`select pg_current_wal_lsn()::text as lsn`;
  for (let k = 0; k < times; k++) await fn();
  const [end] = await server.sql`
    select pg_wal_lsn_diff(pg_current_wal_lsn(), ${String(start?.lsn)}::pg_lsn)::float8 as bytes`;
  return Number(end?.bytes) / times;
}

/** The runner's end-to-end rows: cycle vs floor, WAL, growth, and wake's peak memory. */
export async function benchRunner(ctx: Context, server: Server): Promise<void> {
  await server.sql`
    create table if not exists bench_floor (
      id text primary key, record text not null, resolved boolean not null default false)`;
  const storage = await openStorage({
    dataDir: ctx.tmp,
    databaseUrl: server.url,
    command: 'bench',
    log: () => {},
  });
  try {
    const hundred = sized(100);
    const pair = tasks(storage, server, hundred);
    const stats = await measure(pair, ctx.budget);
    ctx.add({
      section: 'runner',
      name: `suspend→answer→wake→resume→terminal, 100 msgs (${kb(hundred.record)})`,
      goal: { kind: 'at-least', value: 0.5, label: '≥ 0.5' },
      ratio: ratio(stats.floor?.median, stats.cycle?.median),
      ratioMeaning: 'floor/subject',
      subject: stats.cycle,
      floor: stats.floor,
      note: 'the cycle is 11 round trips with 3 durable commits (suspend and answer are transactions across two packages; claim and the completing write are one statement each) against the floor’s 2 statements and 2 commits, and drizzle builds the statements of stores made per transaction again on every call',
    });

    await versusLangGraph(ctx, server, pair.cycle, hundred.messages);
    await withTelemetry(ctx, storage, pair.cycle);

    // WAL is cluster-wide: other sessions' writes land in the same difference, so each
    // side is measured in several batches and the smallest per-cycle figure is kept.
    const batches = ctx.quick ? 2 : 4;
    const per = ctx.quick ? 5 : 20;
    let cycleWal = Number.POSITIVE_INFINITY;
    let floorWal = Number.POSITIVE_INFINITY;
    for (let b = 0; b < batches; b++) {
      floorWal = Math.min(floorWal, await walBytes(server, per, pair.floor));
      cycleWal = Math.min(cycleWal, await walBytes(server, per, pair.cycle));
    }
    ctx.add({
      section: 'runner',
      name: `WAL bytes per cycle, 100 msgs (${kb(cycleWal)} vs floor ${kb(floorWal)})`,
      goal: { kind: 'at-most', value: 3, label: '≤ 3×' },
      ratio: cycleWal / floorWal,
      ratioMeaning: 'subject/floor',
      extra: { cycleWalBytes: cycleWal, floorWalBytes: floorWal, batches, cyclesPerBatch: per },
      note: 'besides the pause and the continuation, each step of the run (waiting, ready, running, completed) writes a new version of its row with its index entries',
    });

    await growth(ctx, storage, server);
    await wakeMemory(ctx, storage, server);
  } finally {
    await storage.close();
  }
}

/**
 * The cycle with metrics and tracing on (spans exported over OTLP/HTTP to a receiver in this
 * process, which drops them) against the same cycle with both off, interleaved.
 */
async function withTelemetry(
  ctx: Context,
  storage: Storage,
  cycle: () => Promise<void>,
): Promise<void> {
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
  const tracing = startTracing();
  const metrics = new RunnerMetrics(() => storage);
  const watched = async () => {
    watching.telemetry = metrics;
    watching.tracer = tracing.tracer;
    try {
      await cycle();
    } finally {
      watching.telemetry = undefined;
      watching.tracer = undefined;
    }
  };
  try {
    const stats = await measure({ on: watched, off: cycle }, ctx.budget);
    await tracing.shutdown();
    const text = await metrics.text();
    // What the metrics said after the run, for the closing note.
    const values = Object.fromEntries(
      text
        .split('\n')
        .filter((line) => /^runner_[a-z_]+(_total|_count|\{status="completed"\}) /.test(line))
        .map((line) => line.split(' ') as [string, string]),
    );
    ctx.add({
      section: 'runner',
      name: 'the cycle with metrics and tracing on (exporting to a local receiver) vs off',
      goal: { kind: 'at-most', value: 1.05, label: '≤ 1.05×' },
      ratio: ratio(stats.on?.median, stats.off?.median),
      ratioMeaning: 'subject/floor',
      subject: stats.on,
      floor: stats.off,
      extra: { exportRequests: received, metrics: values },
      note: 'on: the executive times each model call and run into prom-client, times the human wait and answer→resume from what the answer’s UPDATE and the claim return (no extra read), and records invoke_agent, chat and await_human spans, batched to an OTLP/HTTP receiver; off: one property read per hook',
    });
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

/** The same cycle in LangGraph.js with its Postgres checkpointer, on the same server. */
async function versusLangGraph(
  ctx: Context,
  server: Server,
  cycle: () => Promise<void>,
  messages: Message[],
): Promise<void> {
  const langGraph = await langGraphCycle(server.url, 'bench_langgraph');
  try {
    const stats = await measure(
      { cycle, langgraph: () => langGraph.cycle(messages) },
      { ...ctx.budget, iterations: ctx.quick ? 5 : 20 },
    );
    ctx.add({
      section: 'runner',
      name: 'the cycle vs LangGraph.js 1.7 + PostgresSaver (interrupt → Command resume), 100 msgs',
      goal: { kind: 'at-least', value: 10, label: '≥ 10× faster' },
      ratio: ratio(stats.langgraph?.median, stats.cycle?.median),
      ratioMeaning: 'LangGraph/ours',
      subject: stats.cycle,
      floor: stats.langgraph,
      note: 'the floor column is LangGraph’s cycle; both write to the same server, ours with the reasons of the cycle row',
    });
  } finally {
    await langGraph.close();
  }
}

async function growth(ctx: Context, storage: Storage, server: Server): Promise<void> {
  const perKb: Record<number, number> = {};
  for (const n of [10, 100, 1000, 10_000]) {
    const input = sized(n);
    const bytes = Buffer.byteLength(input.record);
    const budget: Budget =
      n >= 10_000
        ? { time: 1, iterations: ctx.quick ? 2 : 5, rounds: 1 }
        : n >= 1000
          ? { ...ctx.budget, iterations: ctx.quick ? 3 : 10 }
          : ctx.budget;
    const stats: Record<string, Stats> = await measure(tasks(storage, server, input), budget);
    const median = stats.cycle?.median ?? Number.NaN;
    perKb[n] = median / (bytes / 1024);
    ctx.add({
      section: 'runner growth',
      name: `cycle, ${n} msgs (${kb(bytes)})`,
      goal: { kind: 'info', label: 'ms/KB' },
      ratio: perKb[n],
      ratioMeaning: 'ms per KB',
      subject: stats.cycle,
      floor: stats.floor,
      extra: {
        messages: n,
        recordBytes: bytes,
        floorPerKbMs: (stats.floor?.median ?? 0) / (bytes / 1024),
      },
      note: `floor/subject ${ratio(stats.floor?.median, median).toFixed(2)}`,
    });
  }
  ctx.add({
    section: 'runner growth',
    name: 'linear: per-KB cost at 10,000 msgs over per-KB at 1,000',
    goal: { kind: 'at-most', value: 1.5, label: '≤ 1.5' },
    ratio: ratio(perKb[10_000], perKb[1000]),
    ratioMeaning: 'per-KB ratio',
    extra: { perKbMs: perKb },
  });
}

/** One run of the memory child (`wake` or `read`, see wake-memory.ts), in a fresh process. */
async function memoryChild(mode: 'wake' | 'read', source: string, token: string) {
  const child = fileURLToPath(new URL('./wake-memory.js', import.meta.url));
  const { stdout } = await run(process.execPath, ['--expose-gc', child, mode, source, token], {
    maxBuffer: 1024 * 1024,
  });
  const m = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as WakeMemory;
  return { ...m, over: m.peakRss - m.baselineRss };
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
async function wakeMemory(ctx: Context, storage: Storage, server: Server): Promise<void> {
  const input = sized(10_000);
  const transcriptBytes = Buffer.byteLength(JSON.stringify(input.messages));
  const wakes: Measured[] = [];
  for (let k = 0; k < (ctx.quick ? 1 : 5); k++) {
    const token = randomUUID();
    await suspendTurn(storage, token, `conv-memory-${token}`, input.messages);
    await answer(storage, token);
    wakes.push(await memoryChild('wake', server.url, token));
  }
  const m = median(wakes);
  ctx.add({
    section: 'runner',
    name: `wake peak memory, 10,000 msgs (${kb(transcriptBytes)} JSON): +${kb(m.over)} RSS, median of ${wakes.length}`,
    goal: { kind: 'at-most', value: 5, label: '≤ 5× JSON' },
    ratio: m.over / transcriptBytes,
    ratioMeaning: 'peak RSS over baseline / JSON',
    extra: { ...m, transcriptBytes, eachOver: wakes.map((w) => w.over) },
    note: `${bound(m)}the record arrives as one string and is parsed whole: the text and the parsed transcript are alive together (each wake: ${each(wakes)})`,
  });
  await embeddedWakeMemory(ctx, input.messages, transcriptBytes);
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
    const token = randomUUID();
    // PGlite is one process's database: the folder is closed before a child opens it.
    const embedded = await openStorage({ dataDir, command: 'bench', log: () => {} });
    try {
      await suspendTurn(embedded, token, `conv-memory-${token}`, messages);
      await answer(embedded, token);
    } finally {
      await embedded.close();
    }
    wakes.push(await memoryChild('wake', dataDir, token));
    reads.push(await memoryChild('read', dataDir, token));
  }
  const m = median(wakes);
  const floor = median(reads);
  ctx.add({
    section: 'runner',
    name: `wake peak memory on the embedded default, 10,000 msgs: +${kb(m.over)} RSS, median of ${wakes.length}`,
    goal: { kind: 'at-most', value: 5, label: '≤ 5× JSON' },
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
