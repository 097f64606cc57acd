// A Vercel AI SDK generateText loop with durable human-in-the-loop:
//   node dist/agent.js start "Plan me a trip"   runs until a tool waits for the person, saves, exits
//   node dist/agent.js answer "Lisbon"           (any process, any time later) resumes with the answer
//   node dist/agent.js answer yes                approves (anything else denies) a tool that needs approval
// With DEADLINE_MS set, an answer that comes later than that after the question resumes the
// turn with the deadline's default instead (a denial, or DEADLINE_DEFAULT as the output).
import { existsSync } from 'node:fs';
import { anthropic } from '@ai-sdk/anthropic';
import {
  expiredAnswer,
  pendingToolCall,
  resumeModelMessages,
  suspendModelMessages,
  type ToolAnswer,
} from '@x/continuation/ai-sdk';
import { FileContinuationStore } from '@x/continuation/file';
import { generateText, type ModelMessage, stepCountIs, tool } from 'ai';
import { z } from 'zod';

const store = new FileContinuationStore(process.env.STATE_DIR ?? '.state');
const tools = {
  // No execute: a client-side tool, answered by the person.
  ask_user: tool({
    description: 'Ask the person; they may answer days later.',
    inputSchema: z.object({ question: z.string() }),
  }),
  // needsApproval: the AI SDK runs execute only once the person approved.
  book_trip: tool({
    description: 'Book the trip.',
    inputSchema: z.object({ city: z.string() }),
    needsApproval: true,
    execute: async ({ city }) => `booked ${city}, reference X-42`,
  }),
};

async function run(messages: ModelMessage[]): Promise<void> {
  const result = await generateText({
    model: anthropic(process.env.MODEL ?? 'claude-sonnet-5-5'), // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
    system: 'You plan and book trips. Ask the person when you need to know something.',
    tools,
    messages,
    stopWhen: stepCountIs(10),
    providerOptions: { anthropic: { disableParallelToolUse: true } }, // one waiting call per step
  });
  const conversation = [...messages, ...result.response.messages];
  const pending = pendingToolCall(conversation);
  if (!pending) return console.log(result.text);
  // The whole turn is saved: nothing of this process is needed to resume it.
  await store.save(
    suspendModelMessages({ interactionId: pending.toolCallId, messages: conversation }),
  );
  console.log(
    `waiting for ${pending.kind === 'approval' ? 'approval of' : 'an answer to'} ${pending.toolName} ${JSON.stringify(pending.input)}`,
  );
}

const [command, text = ''] = process.argv.slice(2);
if (command === 'start') await run([{ role: 'user', content: text }]);
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
    const approval = suspension.toolName === 'book_trip';
    let answer: ToolAnswer = approval ? { approved: text === 'yes' } : { output: text };
    const wait = Number(process.env.DEADLINE_MS ?? Number.NaN);
    const deadline = new Date(suspension.createdAt.getTime() + wait);
    if (deadline.getTime() < Date.now()) {
      const fallback = approval
        ? { approved: false }
        : { output: process.env.DEADLINE_DEFAULT ?? '' };
      answer = expiredAnswer(deadline, fallback);
      console.log(
        `the deadline ${deadline.toISOString()} passed: its default was applied, not this answer`,
      );
    }
    await run(resumeModelMessages(suspension, answer));
    await store.markResolved(suspension.interactionId); // after the resumed run ended (or asked again)
  }
} else console.error('usage: agent.js start <request> | answer <answer>');
