import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { createSuspension, encodeSuspension, type Suspension } from '@x/continuation';
import { FileContinuationStore } from '@x/continuation/file';
import { PostgresContinuationStore } from '@x/continuation-postgres';
import type { Context, Server } from './context.js';
import { measure, type Stats, statsOf } from './measure.js';
import type { Goal } from './report.js';
import { transcript } from './transcript.js';

/** The message counts of the continuation rows. */
const SIZES = [10, 100, 1000];

function suspensionOf(n: number): Suspension {
  const messages = transcript(n);
  const assistant = messages.at(-1);
  if (assistant?.role !== 'assistant') throw new Error('transcript must end with the question');
  return createSuspension({
    interactionId: 'bench',
    sessionId: 'bench-session',
    toolUseId: 'toolu_ask_0',
    assistant,
    messages,
  });
}

/** The floor's atomic write: temp file, write, fsync, rename, fsync the folder. */
async function writeAtomic(dir: string, name: string, text: string): Promise<void> {
  const temp = join(dir, `.${name}.tmp`);
  const file = await open(temp, 'wx');
  try {
    await file.writeFile(text);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, join(dir, name));
  const folder = await open(dir, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/**
 * The continuation rows' goal: at 10 and 100 messages ≥ 0.8 of the bare floor; from 1,000
 * messages on, ≥ 0.9 of `bound`, the most any store can reach once it returns a parsed,
 * validated transcript (floor / (floor + the JSON work the floor does not do)).
 */
export function continuationGoal(messages: number, bound: number): Goal {
  if (messages < 1000) return { kind: 'at-least', value: 0.8, label: '≥ 0.8' };
  const value = 0.9 * bound;
  return Number.isNaN(value)
    ? { kind: 'at-least', value: Number.NaN, label: '≥ 0.9 × bound' }
    : { kind: 'at-least', value, label: `≥ 0.9 × bound = ${value.toFixed(2)}` };
}

/**
 * The JSON work any store does in one cycle whatever its medium: `JSON.stringify` of the
 * record on save and `JSON.parse` of it on load (the floors write and read ready text).
 * Timed here, in the same run, so a row can say how close to its floor any store can get.
 */
function jsonWork(base: Suspension, text: string): number {
  const samples: number[] = [];
  for (let i = 0; i < 200; i++) {
    const start = performance.now();
    JSON.stringify(encodeSuspension(base));
    JSON.parse(text);
    samples.push(performance.now() - start);
  }
  return statsOf(samples).median;
}

/** The row's note on that bound: floor / (floor + JSON work). */
function jsonNote(floor: Stats | undefined, json: number): { note: string; bound: number } {
  const bound = ratio(floor?.median, floor === undefined ? undefined : floor.median + json);
  return {
    bound,
    note: `JSON.stringify on save + JSON.parse on load alone take ${json.toFixed(2)} ms, so a store doing nothing else beyond the floor reaches at most ${bound.toFixed(2)}`,
  };
}

/** FileContinuationStore save → load → markResolved vs raw durable writes and a read. */
export async function benchFileContinuation(ctx: Context): Promise<void> {
  for (const n of SIZES) {
    const base = suspensionOf(n);
    const text = JSON.stringify(encodeSuspension(base));
    const resolvedText = JSON.stringify(encodeSuspension({ ...base, resolved: true }));
    const storeDir = join(ctx.tmp, `file-store-${n}`);
    const floorDir = join(ctx.tmp, `file-floor-${n}`);
    await mkdir(floorDir, { recursive: true });
    const store = new FileContinuationStore(storeDir);
    let i = 0;
    const stats = await measure(
      {
        floor: async () => {
          const id = `f${i++}`;
          await writeAtomic(floorDir, `${id}.json`, text);
          await readFile(join(floorDir, `${id}.json`), 'utf8');
          await writeAtomic(floorDir, `${id}.resolved`, resolvedText);
        },
        subject: async () => {
          const id = `s${i++}`;
          await store.save({ ...base, interactionId: id });
          await store.load(id);
          await store.markResolved(id);
        },
      },
      ctx.budget,
    );
    const json = jsonWork(base, text);
    const { note, bound } = jsonNote(stats.floor, json);
    ctx.add({
      section: '@x/continuation/file',
      name: `save→load→markResolved, ${n} msgs (${kb(text)})`,
      goal: continuationGoal(n, bound),
      ratio: ratio(stats.floor?.median, stats.subject?.median),
      ratioMeaning: 'floor/subject',
      subject: stats.subject,
      floor: stats.floor,
      extra: { messages: n, recordBytes: Buffer.byteLength(text), jsonMs: json, bound },
      note,
    });
  }
}

/** PostgresContinuationStore vs the same three statements written by hand with postgres.js. */
export async function benchPostgresContinuation(ctx: Context, server: Server): Promise<void> {
  const { sql } = server;
  const store = new PostgresContinuationStore(server.db);
  for (const n of SIZES) {
    const base = suspensionOf(n);
    const text = JSON.stringify(encodeSuspension(base));
    let i = 0;
    const stats = await measure(
      {
        floor: async () => {
          const id = `pf${n}-${i++}`;
          await sql`
            insert into x_continuation.suspensions (interaction_id, session_id, run_id, record, created_at)
            values (${id}, ${'bench-session'}, ${null}, ${text}, ${base.createdAt.toISOString()}::timestamptz)
            on conflict (interaction_id) do update set session_id = excluded.session_id,
              run_id = excluded.run_id, record = excluded.record, created_at = excluded.created_at,
              updated_at = now()
            where x_continuation.suspensions.resolved = false
            returning interaction_id`;
          const [row] = await sql`
            select record, resolved from x_continuation.suspensions where interaction_id = ${id}`;
          if (row === undefined) throw new Error('floor row vanished');
          await sql`
            update x_continuation.suspensions set resolved = true, resolved_at = now(), updated_at = now()
            where interaction_id = ${id} and resolved = false returning interaction_id`;
        },
        subject: async () => {
          const id = `ps${n}-${i++}`;
          await store.save({ ...base, interactionId: id });
          await store.load(id);
          await store.markResolved(id);
        },
      },
      ctx.budget,
    );
    const json = jsonWork(base, text);
    const { note, bound } = jsonNote(stats.floor, json);
    ctx.add({
      section: '@x/continuation-postgres',
      name: `save→load→markResolved, ${n} msgs (${kb(text)})`,
      goal: continuationGoal(n, bound),
      ratio: ratio(stats.floor?.median, stats.subject?.median),
      ratioMeaning: 'floor/subject',
      subject: stats.subject,
      floor: stats.floor,
      extra: { messages: n, recordBytes: Buffer.byteLength(text), jsonMs: json, bound },
      note,
    });
  }
}

/** `a / b`, or NaN when either is missing. */
export function ratio(a: number | undefined, b: number | undefined): number {
  return a === undefined || b === undefined || b === 0 ? Number.NaN : a / b;
}

/** A byte count as KB text. */
export function kb(text: string | number): string {
  const bytes = typeof text === 'number' ? text : Buffer.byteLength(text);
  return bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(1)} MB`
    : `${(bytes / 1024).toFixed(1)} KB`;
}
