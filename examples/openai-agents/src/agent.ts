// An OpenAI Agents SDK agent whose tool needs approval, run by @x/executive:
//   node dist/agent.js start "Book me a trip to Lisbon"   runs until the tool asks for approval, exits
//   node dist/agent.js answer approve                      approves (or `reject "why"`) the open question
//   node dist/agent.js work                                the worker: resumes the run exactly once
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Agent, OpenAIChatCompletionsModel, setTracingDisabled, tool } from '@openai/agents';
import { answer, createExecutive, migrate, sqlExecutiveStorage } from '@x/executive';
import { OPENAI_AGENTS_KIND, openaiAgentsKind, startAgentRun } from '@x/openai-agents';
import { textOf } from '@x/wire';
import { drizzle } from 'drizzle-orm/pglite';
import OpenAI from 'openai';
import { z } from 'zod';

// No trace leaves the machine: the SDK would export them to OpenAI.
setTracingDisabled(true);

// The runs, questions and stored RunStates live in PGlite in .state/ (any PostgreSQL works too).
const dir = process.env.STATE_DIR ?? '.state';
mkdirSync(dir, { recursive: true });

/** The agent, made when a run needs it: answering needs no key. */
function bookingAgent() {
  const bookTrip = tool({
    name: 'book_trip',
    description: 'Books a trip to a city.',
    parameters: z.object({ city: z.string() }),
    needsApproval: true,
    execute: async ({ city }) => {
      // The booking's outside effect, one line per booking, so it can be counted.
      appendFileSync(join(dir, 'bookings.log'), `${city}\n`);
      return `booked ${city}`;
    },
  });
  return new Agent({
    name: 'booker',
    instructions: 'Book the trip the person asks for with book_trip, then confirm it.',
    // OPENAI_API_KEY, OPENAI_BASE_URL
    model: new OpenAIChatCompletionsModel(new OpenAI(), process.env.MODEL ?? 'gpt-4.1-mini'),
    tools: [bookTrip],
  });
}

const pglite = new PGlite(join(dir, 'pglite'));
const db = drizzle({ client: pglite });
await migrate(db);
const storage = sqlExecutiveStorage(db, { queue: { synchronousClaim: true } });
const flow = { storage, events: { wants: () => false, record: async () => {} } };
const conversationId = 'trip';

const [command, text = '', reason = ''] = process.argv.slice(2);
if (command === 'start') {
  const run = { runId: crypto.randomUUID(), conversationId };
  const started = await startAgentRun(flow, run, bookingAgent(), text);
  console.log(
    started.status === 'waiting'
      ? `the run asks: ${started.question}`
      : `the run ${started.status}`,
  );
} else if (command === 'answer' && (text === 'approve' || text === 'reject')) {
  const [question] = await storage.pauses().listPending(conversationId);
  if (!question) {
    process.exitCode = 1;
    console.error('no question waits for an answer (run start first)');
  } else {
    // The answer recorded and its run made ready, in one transaction.
    const action = text === 'approve' ? 'accept' : 'decline';
    await answer(flow, question.token, { action, content: reason });
    console.log(`${text}d "${question.question}"; the worker resumes the run`);
  }
} else if (command === 'work') {
  const executive = createExecutive({
    storage,
    kinds: { [OPENAI_AGENTS_KIND]: openaiAgentsKind({ agent: bookingAgent() }) },
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
  console.error('usage: agent.js start <request> | answer approve | answer reject <why> | work');
  process.exitCode = 2;
}
await pglite.close();
