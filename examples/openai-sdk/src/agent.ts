// An OpenAI SDK (Chat Completions) agent loop with durable human-in-the-loop:
//   node dist/agent.js start "Plan me a trip"   runs until the model asks the person, saves, exits
//   node dist/agent.js answer "Lisbon"           (any process, any time later) resumes with the answer
import { existsSync } from 'node:fs';
import { createSuspension, resumeMessages } from '@x/continuation';
import { FileContinuationStore } from '@x/continuation/file';
import {
  fromOpenAIChat,
  type Message,
  textOf,
  toOpenAIChat,
  toolResult,
  toolUses,
  userMessage,
} from '@x/wire';
import OpenAI from 'openai';

const client = new OpenAI(); // OPENAI_API_KEY, OPENAI_BASE_URL
const store = new FileContinuationStore(process.env.STATE_DIR ?? '.state');
const cityInput = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'ask_user',
      description: 'Ask the person; they may answer days later.',
      parameters: {
        type: 'object',
        properties: { question: { type: 'string' } },
        required: ['question'],
      },
    },
  },
  {
    type: 'function',
    function: { name: 'get_weather', description: 'The weather in a city.', parameters: cityInput },
  },
];
const runTool = (name: string, input: { city?: string }) =>
  name === 'get_weather' ? `sunny in ${input.city}` : `unknown tool ${name}`;

async function run(messages: Message[]): Promise<void> {
  for (;;) {
    const completion = await client.chat.completions.create({
      model: process.env.MODEL ?? 'gpt-5.1',
      tools,
      parallel_tool_calls: false, // a question must be the only call of its turn
      messages: toOpenAIChat(messages, {
        system: 'You plan trips. Ask the person when you need to know something.',
      }),
    });
    const [reply] = fromOpenAIChat(
      completion.choices.slice(0, 1).map((choice) => choice.message),
    ).messages;
    if (reply?.role !== 'assistant') throw new Error('the model sent no message');
    messages.push(reply);
    const calls = toolUses(reply);
    if (calls.length === 0) return console.log(textOf(reply));
    const ask = calls.find((call) => call.name === 'ask_user');
    if (ask) {
      // The whole turn is saved: nothing of this process is needed to resume it.
      await store.save(
        createSuspension({ interactionId: ask.id, toolUseId: ask.id, assistant: reply, messages }),
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
