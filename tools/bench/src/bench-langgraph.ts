// LangGraph.js on our saver against its own Postgres saver: the same graph, the same server.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { type BaseCheckpointSaver, MemorySaver } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { migrate, PostgresCheckpointSaver } from '@x/langgraph';
import type { Message } from '@x/wire';
import type postgres from 'postgres';
import { ratio } from './bench-continuation.js';
import { walBytes } from './bench-runner.js';
import type { Context, Server } from './context.js';
import { measure, type Stats } from './measure.js';
import type { Row } from './report.js';
import { transcript } from './transcript.js';

const State = Annotation.Root({
  messages: Annotation<Message[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

/** The graph's super-steps per run: three nodes in a row, each adding one message. */
export const STEPS = 3;

/** Batches of runs whose WAL is measured, per saver and size; the smallest counts. */
const WAL_BATCHES = 3;

function reply(text: string): Message {
  return { role: 'assistant', content: [{ type: 'text', text }] };
}

/**
 * LangGraph's in-memory saver whose `put` first commits a one-row INSERT (synchronously, on
 * the bench's server): the least a saver whose checkpoints are durable when `put` resolves
 * can cost, since LangGraph sends each `put` only once the one before resolved.
 */
class DurableFloorSaver extends MemorySaver {
  readonly #sql: postgres.Sql;

  constructor(sql: postgres.Sql) {
    super();
    this.#sql = sql;
  }

  override async put(...args: Parameters<MemorySaver['put']>) {
    await this.#sql`insert into bench_langgraph_durable_floor default values`;
    return super.put(...args);
  }
}

export function graphWith(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(State)
    .addNode('plan', () => ({ messages: [reply('plan')] }))
    .addNode('act', () => ({ messages: [reply('act')] }))
    .addNode('report', () => ({ messages: [reply('report')] }))
    .addEdge(START, 'plan')
    .addEdge('plan', 'act')
    .addEdge('act', 'report')
    .addEdge('report', END)
    .compile({ checkpointer });
}

/**
 * One run of a three-step graph on a new thread started with a transcript of 10, 100 and
 * 1,000 messages, checkpointed by `@x/langgraph` and by `@langchain/langgraph-checkpoint-postgres`
 * (its own schema of the same database): steps per second (as time per run, the same steps
 * on both) and WAL bytes per run. Info rows beside them: ours with asynchronous commit,
 * LangGraph's in-memory saver (LangGraph's own time, the ceiling of any saver's ratio), and
 * that saver with one durable one-row INSERT per `put` (the ceiling of a durable saver's).
 */
export async function benchLangGraphSaver(ctx: Context, server: Server): Promise<void> {
  await migrate(server.db);
  const official = PostgresSaver.fromConnString(server.url, { schema: 'bench_langgraph_saver' });
  await official.setup();
  await server.sql`create table if not exists bench_langgraph_durable_floor (id bigint generated always as identity primary key)`;
  const graphs = {
    ours: graphWith(new PostgresCheckpointSaver(server.db)),
    theirs: graphWith(official),
    oursAsync: graphWith(new PostgresCheckpointSaver(server.db, { synchronousCommit: false })),
    memory: graphWith(new MemorySaver()),
    durableFloor: graphWith(new DurableFloorSaver(server.sql)),
  };
  let thread = 0;
  const runOf = (graph: (typeof graphs)['ours'], messages: Message[]) => async () => {
    const done = await graph.invoke(
      { messages },
      { configurable: { thread_id: `saver-${++thread}` } },
    );
    if (done.messages.length !== messages.length + STEPS)
      throw new Error('the graph did not finish');
  };
  try {
    for (const n of [10, 100, 1000]) {
      const messages = transcript(n);
      const ours = runOf(graphs.ours, messages);
      const theirs = runOf(graphs.theirs, messages);
      const stats = await measure(
        {
          ours,
          theirs,
          oursAsync: runOf(graphs.oursAsync, messages),
          memory: runOf(graphs.memory, messages),
          durableFloor: runOf(graphs.durableFloor, messages),
        },
        { ...ctx.budget, iterations: n >= 1000 ? (ctx.quick ? 3 : 10) : ctx.quick ? 5 : 20 },
      );
      const against = (name: string, subject: Stats | undefined, goal: Row['goal'], note: string) =>
        ctx.add({
          section: 'peers',
          name: `LangGraph.js steps/s, ${name}, ${n} msgs`,
          goal,
          ratio: ratio(stats.theirs?.median, subject?.median),
          ratioMeaning: 'PostgresSaver/subject (time per run)',
          subject,
          floor: stats.theirs,
          note,
        });
      const info = { kind: 'info', label: '-' } as const;
      against(
        `@x/langgraph vs PostgresSaver (${STEPS}-step graph)`,
        stats.ours,
        { kind: 'at-least', value: 2, label: '≥ 2×' },
        'the floor column is @langchain/langgraph-checkpoint-postgres 1.0 (node-postgres, one statement per blob and write, in BEGIN/COMMIT); ours sends one statement per call',
      );
      against(
        '@x/langgraph with synchronousCommit: false vs PostgresSaver',
        stats.oursAsync,
        info,
        'ours committing asynchronously: a server crash may lose the last ~0.6 s of checkpoints (those steps run again on resume)',
      );
      against(
        'MemorySaver vs PostgresSaver (the ceiling of any saver)',
        stats.memory,
        info,
        'LangGraph.js with its in-memory saver: its own time per run, which no saver goes below; ≥ 2× is reachable only where this is well above 2',
      );
      against(
        'MemorySaver + one durable INSERT per put vs PostgresSaver (the ceiling of a durable saver)',
        stats.durableFloor,
        info,
        `the in-memory saver whose put first commits a one-row INSERT: LangGraph sends each of the ${STEPS + 2} puts of a run only once the one before resolved, so a saver whose puts are durable when they resolve waits for that many commits one after the other (the first may overlap the graph's own work); ≥ 2× is reachable only where this is above 2`,
      );
      const per = ctx.quick ? 3 : 10;
      // The server's WAL is shared with whatever else runs on it: the smallest of a few batches
      // each leaves out most of what others wrote meanwhile.
      const bytes = { ours: Number.POSITIVE_INFINITY, theirs: Number.POSITIVE_INFINITY };
      for (let batch = 0; batch < WAL_BATCHES; batch++) {
        bytes.ours = Math.min(bytes.ours, await walBytes(server, per, ours));
        bytes.theirs = Math.min(bytes.theirs, await walBytes(server, per, theirs));
      }
      ctx.add({
        section: 'peers',
        name: `LangGraph.js WAL bytes per run, @x/langgraph vs PostgresSaver, ${n} msgs (${Math.round(bytes.ours)} vs ${Math.round(bytes.theirs)} B)`,
        goal: { kind: 'at-most', value: 0.7, label: '≤ 0.7×' },
        ratio: bytes.ours / bytes.theirs,
        ratioMeaning: 'ours/PostgresSaver',
        extra: {
          oursWalBytes: bytes.ours,
          theirsWalBytes: bytes.theirs,
          runs: per,
          batches: WAL_BATCHES,
        },
      });
    }
  } finally {
    await official.end();
  }
}
