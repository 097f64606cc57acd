import { Annotation, Command, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type { Message } from '@x/wire';

const State = Annotation.Root({
  messages: Annotation<Message[]>({ reducer: (_, next) => next, default: () => [] }),
});

/**
 * The same cycle in LangGraph.js with its Postgres checkpointer, for comparison: a graph
 * whose one node asks through `interrupt()` with the transcript as state; `invoke` runs it
 * to the question (checkpointed), and `invoke(new Command({ resume }))` answers, resumes the
 * node and finishes the graph.
 */
export async function langGraphCycle(url: string, schema: string) {
  const checkpointer = PostgresSaver.fromConnString(url, { schema });
  await checkpointer.setup();
  const graph = new StateGraph(State)
    .addNode('ask', (state) => {
      const answer = interrupt({ question: 'Which city should the trip start from?' });
      const reply: Message = {
        role: 'assistant',
        content: [{ type: 'text', text: `Starting the trip from ${String(answer)}. Done.` }],
      };
      return { messages: [...state.messages, reply] };
    })
    .addEdge(START, 'ask')
    .addEdge('ask', END)
    .compile({ checkpointer });
  let thread = 0;
  return {
    cycle: async (messages: Message[]) => {
      const config = { configurable: { thread_id: `lg-${process.pid}-${++thread}` } };
      const asked = await graph.invoke({ messages }, config);
      if (!('__interrupt__' in asked))
        throw new Error('the LangGraph run did not stop on its question');
      const done = await graph.invoke(new Command({ resume: 'Lisbon' }), config);
      if (done.messages.length !== messages.length + 1)
        throw new Error('the LangGraph run did not finish');
    },
    close: () => checkpointer.end(),
  };
}
