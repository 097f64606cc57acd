// A Vercel AI SDK generateText loop whose tool needs approval, run by @x/executive:
//   node dist/agent.js start "Book me a trip to Lisbon"   runs until the tool asks for approval, exits
//   node dist/agent.js answer approve                      approves (or `decline "why"`) the open question
//   node dist/agent.js work                                the worker: resumes the loop exactly once
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { anthropic } from '@ai-sdk/anthropic';
import { PGlite } from '@electric-sql/pglite';
import { AI_SDK_KIND, type AiSdkTurnSettings, aiSdkKind, startAiSdkRun } from '@x/ai-sdk';
import { answer, createExecutive, migrate, sqlExecutiveStorage } from '@x/executive';
import { textOf } from '@x/wire';
import { stepCountIs, tool } from 'ai';
import { drizzle } from 'drizzle-orm/pglite';
import { z } from 'zod';

// The runs, questions and stored conversations live in PGlite in .state/ (any PostgreSQL works too).
const dir = process.env.STATE_DIR ?? '.state';
mkdirSync(dir, { recursive: true });

// needsApproval: the AI SDK runs execute only once the person approved.
const bookTrip = tool({
  description: 'Books a trip to a city.',
  inputSchema: z.object({ city: z.string() }),
  needsApproval: true,
  execute: async ({ city }) => {
    // The booking's outside effect, one line per booking, so it can be counted.
    appendFileSync(join(dir, 'bookings.log'), `${city}\n`);
    return `booked ${city}`;
  },
});

// The same settings start the run and resume it.
const settings: AiSdkTurnSettings = {
  model: anthropic(process.env.MODEL ?? 'claude-sonnet-4-5'), // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
  system: 'Book the trip the person asks for with book_trip, then confirm it.',
  tools: { book_trip: bookTrip },
  stopWhen: stepCountIs(10),
  maxOutputTokens: 1024,
  providerOptions: { anthropic: { disableParallelToolUse: true } }, // one waiting call per step
};

const pglite = new PGlite(join(dir, 'pglite'));
const db = drizzle({ client: pglite });
await migrate(db);
const storage = sqlExecutiveStorage(db, { queue: { synchronousClaim: true } });
const flow = { storage, events: { wants: () => false, record: async () => {} } };
const conversationId = 'trip';

const [command, text = '', reason = ''] = process.argv.slice(2);
if (command === 'start') {
  const run = { runId: crypto.randomUUID(), conversationId };
  const started = await startAiSdkRun(flow, run, settings, [{ role: 'user', content: text }]);
  console.log(
    started.status === 'waiting'
      ? `the run asks: ${started.question}`
      : `the run ${started.status}`,
  );
} else if (command === 'answer' && (text === 'approve' || text === 'decline')) {
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
    kinds: { [AI_SDK_KIND]: aiSdkKind({ settings }) },
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
  console.error('usage: agent.js start <request> | answer approve | answer decline <why> | work');
  process.exitCode = 2;
}
await pglite.close();
