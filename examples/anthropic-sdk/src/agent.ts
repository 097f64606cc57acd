// An Anthropic SDK agent loop with durable human-in-the-loop:
//   node dist/agent.js start "Plan me a trip"   runs until the model asks the person, saves, exits
//   node dist/agent.js answer "Lisbon"           (any process, any time later) resumes with the answer
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { createSuspension, resumeMessages } from '@x/continuation';
import { FileContinuationStore } from '@x/continuation/file';
import {
  fromAnthropicMessage,
  type Message,
  textOf,
  toAnthropicMessages,
  toolResult,
  toolUses,
  userMessage,
} from '@x/wire';

const client = new Anthropic(); // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
const store = new FileContinuationStore(process.env.STATE_DIR ?? '.state');
const tools: Anthropic.Tool[] = [
  {
    name: 'ask_user',
    description: 'Ask the person; they may answer days later.',
    input_schema: {
      type: 'object',
      properties: { question: { type: 'string' } },
      required: ['question'],
    },
  },
  {
    name: 'get_weather',
    description: 'The weather in a city.',
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];
const runTool = (name: string, input: { city?: string }) =>
  name === 'get_weather' ? `sunny in ${input.city}` : `unknown tool ${name}`;

async function run(messages: Message[]): Promise<void> {
  for (;;) {
    const response = await client.messages.create({
      model: process.env.MODEL ?? 'claude-sonnet-5-5',
      max_tokens: 1024,
      system: 'You plan trips. Ask the person when you need to know something.',
      tools,
      tool_choice: { type: 'auto', disable_parallel_tool_use: true }, // a question must be the only call of its turn
      messages: toAnthropicMessages(messages),
    });
    const reply = fromAnthropicMessage(response);
    messages.push(reply);
    const calls = toolUses(reply);
    if (calls.length === 0) return console.log(textOf(reply));
    const ask = calls.find((call) => call.name === 'ask_user');
    if (ask) {
      // The whole turn is saved: nothing of this process is needed to resume it. Keyed by an
      // id of our own: a model server may hand out a tool-use id it gave an earlier request.
      const interactionId = randomUUID();
      await store.save(
        createSuspension({ interactionId, toolUseId: ask.id, assistant: reply, messages }),
      );
      return console.log(`waiting for an answer to ${ask.id}: ${JSON.stringify(ask.input)}`);
    }
    messages.push(
      userMessage(
        ...calls.map((call) =>
          toolResult(call.id, runTool(call.name, call.input as { city?: string })),
        ),
      ),
    );
  }
}

const [command, text = ''] = process.argv.slice(2);
if (command === 'start') await run([userMessage(text)]);
else if (command === 'answer') {
  const open = await store.listUnresolved();
  if (open.length === 0) {
    process.exitCode = 1;
    console.error(
      existsSync(store.directory)
        ? `nothing waits for an answer: the question in ${store.directory} was already answered (run start for a new request)`
        : `nothing was asked yet in ${store.directory}: run start first`,
    );
  }
  for (const suspension of open) {
    await run(resumeMessages(suspension, toolResult(suspension.toolUseId, text)));
    await store.markResolved(suspension.interactionId); // after the resumed run ended (or asked again)
  }
} else console.error('usage: agent.js start <request> | answer <answer>');
