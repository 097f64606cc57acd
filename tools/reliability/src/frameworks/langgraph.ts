// The LangGraph runs of the kill scenario: a real StateGraph on our saver whose two parallel
// nodes ask at once, each node's effect recorded in the side table.
import { Annotation, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import type { ResumeAnswer } from '@x/askuser';
import type { RunKind } from '@x/executive';
import {
  LANGGRAPH_KIND,
  langGraphKind,
  PostgresCheckpointSaver,
  type ThreadGraph,
} from '@x/langgraph';
import { type Hook, type OpenedPlace, recordEffect } from './place.js';

const State = Annotation.Root({
  a: Annotation<string>(),
  b: Annotation<string>(),
});

/** The content of the answer an interrupt was resumed with. */
function contentOf(value: unknown): string {
  return String((value as ResumeAnswer).content);
}

/** The questions of a thread's two parallel interrupts, and the answer each expects. */
export const LANGGRAPH_QUESTIONS = { 'Which city?': 'city', 'Which hotel?': 'hotel' } as const;

/** The answer of run `runId`'s question `question`: its own, so a misdelivery shows. */
export function langGraphAnswer(runId: string, question: string): string {
  return `${runId}:${LANGGRAPH_QUESTIONS[question as keyof typeof LANGGRAPH_QUESTIONS] ?? '?'}`;
}

/**
 * Two nodes of one super-step ask at once (`x` then kills at point 3 after its effect); a third
 * joins their answers. Each records its effect keyed by thread and node.
 */
export function langGraphGraph(db: OpenedPlace['db'], hook: Hook) {
  const effect = (config: { configurable?: { thread_id?: string } }, node: string, v: string) => {
    const run = String(config.configurable?.thread_id);
    return recordEffect(db, { key: `${run}:${node}`, run, value: v });
  };
  return new StateGraph(State)
    .addNode('x', async (_, config) => {
      const a = contentOf(interrupt('Which city?'));
      await effect(config, 'x', a);
      await hook(3);
      return { a };
    })
    .addNode('y', async (_, config) => {
      const b = contentOf(interrupt('Which hotel?'));
      await effect(config, 'y', b);
      return { b };
    })
    .addNode('join', async ({ a, b }, config) => {
      await effect(config, 'join', `${a}+${b}`);
      return {};
    })
    .addEdge(START, 'x')
    .addEdge(START, 'y')
    .addEdge('x', 'join')
    .addEdge('y', 'join')
    .addEdge('join', END)
    .compile({ checkpointer: new PostgresCheckpointSaver(db) });
}

/** The kind the worker resumes threads with; point 2 when it calls the restored graph. */
export function workerKind(db: OpenedPlace['db'], hook: Hook): { name: string; kind: RunKind } {
  const compiled = langGraphGraph(db, hook);
  // The kind has read the thread's checkpoint (getState) and calls the graph.
  const graph: ThreadGraph = {
    getState: (config) => compiled.getState(config),
    invoke: async (input, config) => {
      await hook(2);
      return compiled.invoke(input as never, config);
    },
  };
  return { name: LANGGRAPH_KIND, kind: langGraphKind({ graph }) };
}
