// The executive's run queue: claim latency as history grows, wake throughput per worker
// count, and the approval center's latency on the embedded default while a model runs.
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase } from '@internal/pg-test';
import { migrate, PostgresRunQueue } from '@x/continuation-postgres';
import type { Model } from '@x/executive';
import type { AssistantMessage } from '@x/wire';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { leasePolicyFromEnv } from 'runner/dist/config/executive-policy.js';
import { answerBatch, startRun, wake } from 'runner/dist/executive/index.js';
import { ScriptedModel } from 'runner/dist/model/scripted.js';
import { startServe } from 'runner/dist/serve/index.js';
import { openStorage, type Storage } from 'runner/dist/storage/index.js';
import type { Context, Db, Server } from './context.js';
import { statsOf } from './measure.js';
import { benchStorage } from './runner-cycle.js';

const trip = new ScriptedModel('trip');

/** The trip model, with every call taking `ms` (a model turn's latency). */
function slowModel(ms: number): Model {
  return {
    id: trip.id,
    async generate(request): Promise<AssistantMessage> {
      await sleep(ms, undefined, { signal: request.signal });
      return trip.generate(request);
    },
  };
}

const quiet = { event() {} };

/** Fills a fresh database's run table: `finished` completed, `waiting` waiting, `ready` ready. */
async function fillRuns(url: string, counts: { finished: number; waiting: number; ready: number }) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await migrate(drizzle({ client: sql }) as unknown as Db);
    await sql`
      insert into x_continuation.runs (run_id, conversation_id, status, interaction_id, claimable_at, finished_at, created_at)
      select 'run-' || g, 'conv-' || (g % 10000),
        case when g <= ${counts.ready} then 'ready'
             when g <= ${counts.ready + counts.finished} then 'completed' else 'waiting' end,
        'ask-' || g,
        case when g <= ${counts.ready} then now() - interval '1 hour' + make_interval(secs => g) end,
        case when g > ${counts.ready} and g <= ${counts.ready + counts.finished} then now() end,
        now() - make_interval(secs => g)
      from generate_series(1, ${counts.ready + counts.finished + counts.waiting}) g`;
    await sql`insert into x_continuation.run_queue (run_id, claimable_at, leased)
      select run_id, claimable_at, false from x_continuation.runs where claimable_at is not null`;
    await sql`vacuum analyze x_continuation.runs`;
    await sql`vacuum analyze x_continuation.run_queue`;
    const plan = await sql.unsafe(`explain select r.run_id from x_continuation.run_queue q
      join x_continuation.runs r on r.run_id = q.run_id and r.claimable_at = q.claimable_at
      where q.claimable_at <= now() and not q.run_id = any('{}'::text[])
      order by q.claimable_at limit 1 for update of r skip locked`);
    const lines = plan.map((row) => String(Object.values(row)[0]).trim());
    return lines.find((line) => / Scan /.test(line)) ?? lines.join(' / ');
  } finally {
    await sql.end();
  }
}

/** Median claim latency on a table filled as `counts` (each claim takes one ready run). */
async function claimLatency(
  server: string,
  counts: { finished: number; waiting: number; ready: number },
  claims: number,
) {
  const database = await createTestDatabase(server, 'x_bench_claim');
  try {
    const plan = await fillRuns(database.url, counts);
    const client = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const queue = new PostgresRunQueue(drizzle({ client }) as unknown as Db);
      for (let i = 0; i < 20; i++) await queue.claim({ owner: 'warm', leaseMs: 60_000 });
      const samples: number[] = [];
      for (let i = 0; i < claims; i++) {
        const t = performance.now();
        await queue.claim({ owner: `w${i}`, leaseMs: 60_000 });
        samples.push(performance.now() - t);
      }
      return { stats: statsOf(samples), plan };
    } finally {
      await client.end();
    }
  } finally {
    await database.drop();
  }
}

/** Claim latency at 1M finished + 1M waiting runs vs 1k + 1k: the claim reads only claimable work. */
export async function benchClaim(ctx: Context, server: Server): Promise<void> {
  const big = ctx.quick ? 100_000 : 1_000_000;
  const claims = ctx.quick ? 200 : 2_000;
  const base = new URL(server.url);
  base.pathname = '/postgres';
  ctx.log(`filling ${big.toLocaleString()} finished + ${big.toLocaleString()} waiting runs…`);
  const small = await claimLatency(
    base.toString(),
    { finished: 1_000, waiting: 1_000, ready: claims + 50 },
    claims,
  );
  const large = await claimLatency(
    base.toString(),
    { finished: big, waiting: big, ready: claims + 50 },
    claims,
  );
  ctx.add({
    section: 'queue',
    name: `claim at ${big.toLocaleString()} finished + ${big.toLocaleString()} waiting vs 1,000 + 1,000`,
    goal: { kind: 'at-most', value: 2, label: '≤ 2×' },
    ratio: large.stats.median / small.stats.median,
    ratioMeaning: 'large/small median',
    subject: large.stats,
    floor: small.stats,
    note: `plan at ${big.toLocaleString()}: ${large.plan.trim()}`,
  });
}

/** Makes `count` runs waiting on their first question; returns their tokens. */
async function waitingRuns(storage: Storage, count: number, prefix: string): Promise<string[]> {
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) {
    const run = await startRun(storage, trip, 'Plan a trip', `${prefix}-${i}`, quiet);
    if (run.status !== 'waiting') throw new Error(`${prefix}-${i}: ${run.status}`);
    tokens.push(run.token);
  }
  return tokens;
}

/** Runs resumed per second by one wake with N workers and a 2 s model, against N / 2 s. */
export async function benchWakeThroughput(ctx: Context, server: Server): Promise<void> {
  const storage = await benchStorage(ctx.tmp, server.url);
  try {
    for (const concurrency of [1, 4, 16]) {
      const runs = concurrency * (ctx.quick ? 2 : 4);
      const tokens = await waitingRuns(storage, runs, `throughput-${concurrency}`);
      let stop = () => {};
      const stopped = new Promise<void>((resolve) => {
        stop = resolve;
      });
      let resumed = 0;
      const started = performance.now();
      let finished = started;
      const loop = wake(storage, {
        once: false,
        concurrency,
        policy: leasePolicyFromEnv(),
        modelFor: () => slowModel(2_000),
        observerFor: () => quiet,
        onResumed: () => {
          if (++resumed === runs) {
            finished = performance.now();
            stop();
          }
        },
        onUnavailable: () => {},
        stop: stopped,
      });
      await answerBatch(
        storage,
        tokens.map((token) => ({ token, answer: { action: 'accept', content: 'Lisbon' } })),
      );
      await loop;
      const perSecond = runs / ((finished - started) / 1000);
      ctx.add({
        section: 'queue',
        name: `wake throughput, concurrency ${concurrency}, 2 s model (${perSecond.toFixed(2)} runs/s)`,
        goal: { kind: 'at-least', value: 0.8, label: '≥ 0.8' },
        ratio: perSecond / (concurrency / 2),
        ratioMeaning: 'runs/s over concurrency/2 s',
        extra: { runs, seconds: (finished - started) / 1000, perSecond },
      });
    }
  } finally {
    await storage.close();
  }
}

/** `GET /api/pauses` p99 on the embedded default while a 5 s resume runs, against idle. */
export async function benchApiDuringResume(ctx: Context): Promise<void> {
  const dataDir = mkdtempSync(path.join(ctx.tmp, 'embedded-'));
  const storage = await openStorage({ dataDir, command: 'bench', log: () => {} });
  try {
    const [token] = await waitingRuns(storage, 1, 'api');
    await waitingRuns(storage, 20, 'listed');
    const server = await startServe(storage, { port: 0, modelFor: () => slowModel(5_000) });
    try {
      const get = async () => {
        const t = performance.now();
        const res = await fetch(new URL('/api/pauses', server.url));
        await res.arrayBuffer();
        return performance.now() - t;
      };
      const sample = async (ms: number) => {
        const samples: number[] = [];
        const end = performance.now() + ms;
        while (performance.now() < end) samples.push(await get());
        return statsOf(samples);
      };
      const idle = await sample(2_000);
      await fetch(new URL(`/api/pauses/${token}/answer`, server.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'accept', content: 'Lisbon' }),
      });
      const run = storage.runs();
      for (;;) {
        if ((await run.list({ status: 'running', limit: 1 })).length) break;
        await sleep(10);
      }
      const busy = await sample(4_000);
      ctx.add({
        section: 'queue',
        name: `GET /api/pauses p99 on the embedded default during a 5 s resume (${busy.p99.toFixed(1)} ms; idle ${idle.p99.toFixed(1)} ms)`,
        goal: { kind: 'at-most', value: 50, label: '≤ 50 ms' },
        ratio: busy.p99,
        ratioMeaning: 'p99 ms',
        subject: busy,
        floor: idle,
      });
    } finally {
      await server.close();
    }
  } finally {
    await storage.close();
  }
}
