// A LangGraph.js graph whose node calls the Anthropic SDK and asks the person with interrupt(),
// run by @x/executive through @x/langgraph, without the runner:
//   node dist/agent.js start "Plan me a trip"   runs the thread until it asks, records the run, exits
//   node dist/agent.js answer "Lisbon"           answers the open question: the run is ready
//   node dist/agent.js work                      the worker: resumes ready threads, each exactly once
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { PGlite } from '@electric-sql/pglite';
import { Annotation, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import type { ResumeAnswer } from '@x/askuser';
import {
  answer,
  createExecutive,
  migrate as migrateExecutive,
  sqlExecutiveStorage,
} from '@x/executive';
import {
  LANGGRAPH_KIND,
  langGraphKind,
  migrate,
  PostgresCheckpointSaver,
  startLangGraphRun,
} from '@x/langgraph';
import { drizzle } from 'drizzle-orm/pglite';

// Made on the first model call: answering needs no key.
let client: Anthropic | undefined; // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
const modelId = process.env.MODEL ?? 'claude-sonnet-5-5';
const tools: Anthropic.Tool[] = [
  {
    name: 'ask_user',
    description: 'Ask the person a question and wait for the answer.',
    input_schema: { type: 'object', properties: { question: { type: 'string' } } },
  },
  {
    name: 'get_weather',
    description: 'The weather in a city.',
    input_schema: { type: 'object', properties: { city: { type: 'string' } } },
  },
];

const State = Annotation.Root({
  messages: Annotation<Anthropic.MessageParam[]>({
    reducer: (all, added) => [...all, ...added],
    default: () => [],
  }),
});
type Messages = typeof State.State;

/** The model's turn: one Messages API call, its reply appended to the thread. */
async function agent({ messages }: Messages) {
  client ??= new Anthropic();
  const reply = await client.messages.create({
    model: modelId,
    max_tokens: 1024,
    system: 'You plan trips. Ask the person (ask_user) when you need to know something.',
    tools,
    tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    messages,
  });
  return { messages: [{ role: 'assistant' as const, content: reply.content }] };
}

/** The reply's tool calls, run: `ask_user` stops the thread on interrupt() until it is answered. */
function runTools({ messages }: Messages) {
  const content = messages.at(-1)?.content;
  const blocks: Anthropic.ContentBlockParam[] = Array.isArray(content) ? content : [];
  const calls = blocks.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
  const results = calls.map((call) => {
    const input = call.input as { question?: string; city?: string };
    const text =
      call.name === 'ask_user'
        ? String(interrupt({ question: input.question }))
        : `sunny in ${input.city}`;
    return { type: 'tool_result' as const, tool_use_id: call.id, content: text };
  });
  return { messages: [{ role: 'user' as const, content: results }] };
}

/** Whether the model's last reply called a tool. */
function next({ messages }: Messages): 'tools' | typeof END {
  const content = messages.at(-1)?.content;
  return Array.isArray(content) && content.some((b) => b.type === 'tool_use') ? 'tools' : END;
}

// The runs, questions and checkpoints live in PGlite in .state/ (any PostgreSQL works too).
const dir = process.env.STATE_DIR ?? '.state';
mkdirSync(dir, { recursive: true });
const pglite = new PGlite(join(dir, 'pglite'));
const db = drizzle({ client: pglite });
await migrateExecutive(db);
await migrate(db);
const storage = sqlExecutiveStorage(db, { queue: { synchronousClaim: true } });
const flow = { storage, events: { wants: () => false, record: async () => {} } };
const conversationId = 'trip';

const graph = new StateGraph(State)
  .addNode('agent', agent)
  .addNode('tools', runTools)
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', next, ['tools', END])
  .addEdge('tools', 'agent')
  .compile({ checkpointer: new PostgresCheckpointSaver(db) });
// interrupt() returns the answer's text; a declined question tells the model so.
const resumeValue = (a: ResumeAnswer) => (a.action === 'accept' ? String(a.content) : 'declined');

const [command, text = ''] = process.argv.slice(2);
if (command === 'start') {
  const run = { runId: crypto.randomUUID(), conversationId };
  const input = { messages: [{ role: 'user', content: text }] };
  const started = await startLangGraphRun(flow, { graph, resumeValue }, run, input);
  console.log(
    started.status === 'waiting'
      ? `the run asks: ${started.question}`
      : `the run ${started.status}`,
  );
} else if (command === 'answer') {
  const [question] = await storage.pauses().listPending(conversationId);
  if (!question) {
    process.exitCode = 1;
    console.error('no question waits for an answer (run start first)');
  } else {
    // The answer recorded and its run made ready, in one transaction.
    await answer(flow, question.token, { action: 'accept', content: text });
    console.log(`answered "${question.question}"; the worker resumes the run`);
  }
} else if (command === 'work') {
  const executive = createExecutive({
    storage,
    kinds: { [LANGGRAPH_KIND]: langGraphKind({ graph, resumeValue }) },
    lease: {
      leaseMs: Number(process.env.LEASE_MS ?? 60_000),
      retry: { maxAttempts: 5, baseMs: 1_000 },
    },
  });
  let resumed = 0;
  await executive.work({
    once: true,
    onEvent: (event) => {
      if (event.type !== 'run-resumed') return;
      resumed++;
      const { result } = event;
      if (result.status !== 'completed') return console.log(`the run is ${result.status}`);
      // The run's transcript is the graph's final state as JSON: print the model's last words.
      const [final] = result.messages;
      const state = JSON.parse(final?.content[0]?.type === 'text' ? final.content[0].text : '{}');
      const last = (state as Messages).messages?.at(-1)?.content;
      const words = Array.isArray(last) ? last.find((b) => b.type === 'text') : undefined;
      console.log(words?.type === 'text' ? words.text : String(last));
    },
  });
  if (resumed === 0) console.log('nothing to resume');
} else {
  console.error('usage: agent.js start <request> | answer <answer> | work');
  process.exitCode = 2;
}
await pglite.close();
