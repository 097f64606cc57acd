// An Anthropic SDK agent run by @x/executive, without the runner:
//   node dist/agent.js start "Plan me a trip"   runs until the model asks the person, records the run, exits
//   node dist/agent.js answer "Lisbon"           answers the open question: the run is ready
//   node dist/agent.js work                      the worker: resumes ready runs, each exactly once
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { PGlite } from '@electric-sql/pglite';
import {
  answer,
  createExecutive,
  type Model,
  migrate,
  type OrdinaryTools,
  recordStart,
  runTurn,
  sqlExecutiveStorage,
  TURN_KIND,
  turnKind,
} from '@x/executive';
import { fromAnthropicMessage, textOf, toAnthropicMessages, userMessage } from '@x/wire';
import { drizzle } from 'drizzle-orm/pglite';
import { z } from 'zod';

// Made on the first model call: answering needs no key.
let client: Anthropic | undefined; // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
const modelId = process.env.MODEL ?? 'claude-sonnet-5-5';
// The executive's model port over the SDK: one call, the reply read back as a wire message.
const model: Model = {
  id: modelId,
  async generate({ system, messages, tools, signal }) {
    client ??= new Anthropic();
    const response = await client.messages.create(
      {
        model: modelId,
        max_tokens: 1024,
        system,
        tools: tools.map((t) => ({
          name: t.name,
          description: t.description,
          input_schema: { type: 'object', ...t.inputSchema },
        })),
        tool_choice: { type: 'auto', disable_parallel_tool_use: true }, // a question must be the only call
        messages: toAnthropicMessages(messages),
      },
      signal ? { signal } : {},
    );
    return fromAnthropicMessage(response);
  },
};
const system = 'You plan trips. Ask the person (ask_user) when you need to know something.';
const tools: OrdinaryTools = {
  get_weather: {
    description: 'The weather in a city.',
    input: z.object({ city: z.string() }),
    run: (input) => `sunny in ${(input as { city: string }).city}`,
  },
};

// The runs, questions and continuations live in PGlite in .state/ (any PostgreSQL works too).
const dir = process.env.STATE_DIR ?? '.state';
mkdirSync(dir, { recursive: true });
const pglite = new PGlite(join(dir, 'pglite'));
const db = drizzle({ client: pglite });
await migrate(db);
const storage = sqlExecutiveStorage(db, { queue: { synchronousClaim: true } });
const flow = { storage, events: { wants: () => false, record: async () => {} } };
const conversationId = 'trip';

const [command, text = ''] = process.argv.slice(2);
if (command === 'start') {
  const run = { runId: crypto.randomUUID(), conversationId };
  const turn = await runTurn(model, [userMessage(text)], { event() {} }, { system, tools });
  const started = await recordStart(flow, run, model, turn, { model: model.id });
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
    kinds: { [TURN_KIND]: turnKind({ modelFor: () => model, system, tools }) },
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
      const last = result.status === 'completed' ? result.messages.at(-1) : undefined;
      console.log(last ? textOf(last) : `the run is ${result.status}`);
    },
  });
  if (resumed === 0) console.log('nothing to resume');
} else {
  console.error('usage: agent.js start <request> | answer <answer> | work');
  process.exitCode = 2;
}
await pglite.close();
