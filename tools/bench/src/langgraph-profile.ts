#!/usr/bin/env node
// Where a LangGraph step's time goes, per saver call: statements (round trips), bytes sent
// and the client's own time before its first statement, for @x/langgraph and PostgresSaver.
// `node tools/bench/dist/langgraph-profile.js [runs]` against the bench's server.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { migrate, PostgresCheckpointSaver } from '@x/langgraph';
import { drizzle } from 'drizzle-orm/postgres-js';
// @ts-expect-error: pg ships no types and the bench does not install @types/pg.
import pg from 'pg';
import postgres from 'postgres';
import { graphWith } from './bench-langgraph.js';
import type { Db } from './context.js';
import { createDatabase, serverUrl } from './db.js';
import { transcript } from './transcript.js';

interface Call {
  name: string;
  started: number;
  firstSent?: number;
  statements: number;
  bytes: number;
  /** For `putWrites`: how many writes (rows, one per write) it was given. */
  writes: number;
  ended?: number;
}

const current = new AsyncLocalStorage<Call>();
const wrapped = new WeakSet<object>();

function sizeOf(parameters: unknown[] | undefined): number {
  let bytes = 0;
  for (const p of parameters ?? []) {
    if (typeof p === 'string') bytes += Buffer.byteLength(p);
    else if (p instanceof Uint8Array) bytes += p.byteLength;
    else if (Array.isArray(p)) bytes += sizeOf(p);
    else if (p != null) bytes += String(p).length;
  }
  return bytes;
}

/** Transactions that wrote, of the saver being profiled: each waits for a commit (an fsync). */
let commits = 0;

function sent(text: string, parameters: unknown[] | undefined): void {
  const call = current.getStore();
  if (call === undefined) return;
  call.statements++;
  call.firstSent ??= performance.now();
  call.bytes += Buffer.byteLength(text) + sizeOf(parameters);
}

/** `saver` whose calls are recorded in `calls`. */
function recorded<T extends BaseCheckpointSaver>(saver: T, calls: Call[]): T {
  // A saver wrapped twice would count its statements in the inner call.
  if (wrapped.has(saver)) throw new Error('a saver is recorded once');
  wrapped.add(saver);
  for (const name of ['put', 'putWrites', 'getTuple'] as const) {
    const original = (saver[name] as (...a: unknown[]) => Promise<unknown>).bind(saver);
    (saver as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      const writes = name === 'putWrites' ? (args[1] as unknown[]).length : 0;
      const call: Call = { name, started: performance.now(), statements: 0, bytes: 0, writes };
      calls.push(call);
      return current.run(call, () =>
        original(...args).finally(() => {
          call.ended = performance.now();
        }),
      );
    };
  }
  return saver;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? 0 : (s[Math.floor(s.length / 2)] ?? 0);
};

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 20);
  const database = await createDatabase(serverUrl());
  const client = postgres(database.url, { max: 4, onnotice: () => {} });
  const db = drizzle({ client }) as unknown as Db;
  // Every statement of ours goes through the postgres.js client's `unsafe`.
  const unsafe = client.unsafe.bind(client);
  (client as unknown as { unsafe: unknown }).unsafe = (t: string, p?: unknown[], o?: unknown) => {
    sent(t, p);
    // A write of ours sent on the pool is a transaction of its own.
    if (current.getStore()?.name.startsWith('put')) commits++;
    return unsafe(t, p as never, o as never);
  };
  // A batch of ours is a transaction on a reserved connection, sent behind BEGIN.
  const reserve = client.reserve.bind(client);
  (client as unknown as { reserve: unknown }).reserve = () => {
    commits++;
    return reserve();
  };
  // PostgresSaver's go through node-postgres' Client.query.
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [text, parameters] = args as [string | { text: string; values?: unknown[] }, unknown[]];
    const statement = typeof text === 'string' ? text : text.text;
    sent(statement, typeof text === 'string' ? parameters : text.values);
    if (/^commit$/i.test(statement.trim())) commits++;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  await migrate(db);
  const official = PostgresSaver.fromConnString(database.url, { schema: 'profile' });
  await official.setup();
  try {
    console.log(
      'saver | msgs | call | calls/run | statements/call | bytes sent/call | client ms before 1st statement | ms/call (median)',
    );
    for (const n of [10, 100, 1000]) {
      const messages = transcript(n);
      for (const [label, make] of [
        ['@x/langgraph', () => new PostgresCheckpointSaver(db)],
        ['PostgresSaver', () => PostgresSaver.fromConnString(database.url, { schema: 'profile' })],
      ] as const) {
        const calls: Call[] = [];
        const saver = make();
        const graph = graphWith(recorded(saver, calls));
        for (let r = 0; r < 3; r++)
          await graph.invoke({ messages }, { configurable: { thread_id: `w-${label}-${n}-${r}` } });
        calls.length = 0;
        commits = 0;
        for (let r = 0; r < runs; r++)
          await graph.invoke({ messages }, { configurable: { thread_id: `p-${label}-${n}-${r}` } });
        for (const name of ['put', 'putWrites', 'getTuple']) {
          const of = calls.filter((c) => c.name === name);
          if (of.length === 0) continue;
          console.log(
            [
              label,
              n,
              name,
              (of.length / runs).toFixed(1),
              median(of.map((c) => c.statements)),
              median(of.map((c) => c.bytes)),
              median(of.map((c) => (c.firstSent ?? c.started) - c.started)).toFixed(2),
              median(of.map((c) => (c.ended ?? c.started) - c.started)).toFixed(2),
            ].join(' | '),
          );
        }
        const puts = calls.filter((c) => c.name === 'putWrites');
        const writes = puts.reduce((sum, c) => sum + c.writes, 0) / Math.max(1, puts.length);
        console.log(`${label} | ${n} | writes (rows) per putWrites call | ${writes.toFixed(2)}`);
        console.log(
          `${label} | ${n} | write transactions per run | ${(commits / runs).toFixed(1)}`,
        );
        if (saver instanceof PostgresSaver) await saver.end();
      }
    }
  } finally {
    await official.end();
    await client.end({ timeout: 1 });
    await database.drop();
  }
}

await main();
