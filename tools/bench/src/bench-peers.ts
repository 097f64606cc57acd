// Our cycle against its peers on the same server: LangGraph.js with its Postgres
// checkpointer, graphile-worker's job start, and the CLI against a bare postgres.js process.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ASKUSER_ANSWERED_CHANNEL } from '@x/askuser';
import { Logger, run as runGraphileWorker } from 'graphile-worker';
import postgres from 'postgres';
import { ratio } from './bench-continuation.js';
import { withCycle } from './bench-runner.js';
import type { Context, Server } from './context.js';
import { langGraphCycle } from './langgraph-cycle.js';
import { measure, statsOf } from './measure.js';
import { answer, benchStorage, sized, suspendTurn, wakeOnce } from './runner-cycle.js';

const execute = promisify(execFile);

/** The same cycle in LangGraph.js with its Postgres checkpointer, at 10, 100 and 1,000 messages. */
export async function benchLangGraph(ctx: Context, server: Server): Promise<void> {
  const langGraph = await langGraphCycle(server.url, 'bench_langgraph');
  try {
    await withCycle(ctx, server.url, async (cycle) => {
      for (const n of [10, 100, 1000]) {
        const { messages } = sized(n);
        const stats = await measure(
          { cycle: () => cycle(messages), langgraph: () => langGraph.cycle(messages) },
          { ...ctx.budget, iterations: n >= 1000 ? (ctx.quick ? 3 : 10) : ctx.quick ? 5 : 20 },
        );
        const target = n === 100 ? 5 : n === 1000 ? 10 : undefined;
        ctx.add({
          section: 'peers',
          name: `the cycle vs LangGraph.js 1.7 + PostgresSaver (interrupt → Command resume), ${n} msgs`,
          goal:
            target === undefined
              ? { kind: 'info', label: '-' }
              : { kind: 'at-least', value: target, label: `≥ ${target}× faster` },
          ratio: ratio(stats.langgraph?.median, stats.cycle?.median),
          ratioMeaning: 'LangGraph/ours',
          subject: stats.cycle,
          floor: stats.langgraph,
          note: 'the floor column is LangGraph’s cycle, which writes its whole state at each step; ours runs through a `wake` loop woken by LISTEN/NOTIFY',
        });
      }
    });
  } finally {
    await langGraph.close();
  }
}

/**
 * Answer → resume: from the answer's commit (the call returned) to the resumed turn's model
 * call, with a `wake` loop on LISTEN/NOTIFY; against graphile-worker's `addJob` returning to
 * its task starting, a one-worker runner on the same server. Samples alternate.
 */
export async function benchAnswerToResume(ctx: Context, server: Server): Promise<void> {
  const samples = ctx.quick ? 30 : 200;
  const { messages } = sized(10);
  let started: () => void = () => {};
  let startedAt = Number.NaN;
  const worker = await runGraphileWorker({
    connectionString: server.url,
    concurrency: 1,
    noHandleSignals: true,
    pollInterval: 2_000,
    logger: new Logger(() => () => {}),
    taskList: {
      bench: async () => {
        startedAt = performance.now();
        started();
      },
    },
  });
  const ours: number[] = [];
  const theirs: number[] = [];
  // The commit is seen by whichever comes first: the call returning, or its notification
  // reaching a listener of the bench's own (the call may still be unwinding after the commit).
  const listener = postgres(server.url, { max: 1, onnotice: () => {} });
  let notifiedAt = Number.POSITIVE_INFINITY;
  const noticed = () => {
    notifiedAt = Math.min(notifiedAt, performance.now());
  };
  await listener.listen(ASKUSER_ANSWERED_CHANNEL, noticed);
  await listener.listen('jobs:insert', noticed);
  const committed = async (call: () => Promise<unknown>) => {
    notifiedAt = Number.POSITIVE_INFINITY;
    await call();
    return Math.min(performance.now(), notifiedAt);
  };
  try {
    await withCycle(ctx, server.url, async (_cycle, storage, loop) => {
      const one = async () => {
        const token = randomUUID();
        await suspendTurn(storage, token, `conv-${token}`, messages);
        const done = loop.resumed(token);
        const answeredAt = await committed(() => answer(storage, token));
        await done;
        return loop.modelCalledAt - answeredAt;
      };
      const job = async () => {
        const began = new Promise<void>((resolve) => {
          started = resolve;
        });
        const addedAt = await committed(() => worker.addJob('bench', {}));
        await began;
        return startedAt - addedAt;
      };
      for (let k = 0; k < 5; k++) {
        await one();
        await job();
      }
      for (let k = 0; k < samples; k++) {
        if (k % 2 === 0) {
          ours.push(await one());
          theirs.push(await job());
        } else {
          theirs.push(await job());
          ours.push(await one());
        }
      }
    });
  } finally {
    await worker.stop();
    await listener.end({ timeout: 5 });
  }
  const subject = statsOf(ours);
  const floor = statsOf(theirs);
  for (const q of ['median', 'p99'] as const) {
    ctx.add({
      section: 'peers',
      name: `answer → resume ${q === 'median' ? 'p50' : 'p99'} vs graphile-worker 0.17 addJob → task start, ${samples} each (${subject[q].toFixed(2)} vs ${floor[q].toFixed(2)} ms)`,
      goal: { kind: 'at-most', value: 1, label: '≤ 1×' },
      ratio: ratio(subject[q], floor[q]),
      ratioMeaning: 'ours/theirs',
      subject,
      floor,
      note: 'ours: the answer committed → the resumed turn’s model call, a one-worker `wake` loop on LISTEN/NOTIFY; theirs: `addJob` committed → the task function called, a one-worker graphile-worker runner (LISTEN/NOTIFY, 2 s poll) in the same process; committed: the call returned or its notification reached a listener of the bench, whichever came first',
    });
  }
}

const cli = fileURLToPath(import.meta.resolve('runner/dist/cli.js'));
const bare = fileURLToPath(new URL('./bare-statement.js', import.meta.url));

async function wallMs(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const start = performance.now();
  await execute(process.execPath, args, { env });
  return performance.now() - start;
}

/**
 * `runner answer TOKEN --accept TEXT` on PostgreSQL, wall time from spawn to exit, against a
 * `node` process that connects with postgres.js and runs one statement; samples alternate.
 */
export async function benchCliAnswer(ctx: Context, server: Server): Promise<void> {
  const count = ctx.quick ? 3 : 10;
  const env = { ...process.env, DATABASE_URL: server.url, RUNNER_DATA: ctx.tmp };
  // No `wake` loop here: these runs are resumed below, once measured.
  const storage = await benchStorage(ctx.tmp, server.url);
  const ours: number[] = [];
  const theirs: number[] = [];
  try {
    const { messages } = sized(10);
    const tokens: string[] = [];
    for (let k = 0; k <= count; k++) {
      const token = randomUUID();
      await suspendTurn(storage, token, `conv-${token}`, messages);
      tokens.push(token);
    }
    const [warm = '', ...measured] = tokens;
    const answerArgs = (token: string) => [cli, 'answer', token, '--accept', 'Lisbon'];
    await wallMs(answerArgs(warm), env); // the file cache warm for both
    await wallMs([bare, server.url], env);
    for (const token of measured) {
      ours.push(await wallMs(answerArgs(token), env));
      theirs.push(await wallMs([bare, server.url], env));
    }
    for (const token of tokens) await wakeOnce(storage, token);
  } finally {
    await storage.close();
  }
  const subject = statsOf(ours);
  const floor = statsOf(theirs);
  ctx.add({
    section: 'peers',
    name: `\`runner answer\` on PostgreSQL vs node + postgres.js + one statement, wall time, ${count} each`,
    goal: { kind: 'at-most', value: 3, label: '≤ 3×' },
    ratio: ratio(subject.median, floor.median),
    ratioMeaning: 'subject/floor',
    subject,
    floor,
    note: 'both are spawned and awaited to their exit; the floor imports postgres.js, connects, runs `select 1` and ends',
  });
}
