import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import {
  type FakeLlm,
  PROGRAMS_TEST_TIMEOUT_MS,
  promisedOutput,
  type ReadmeRun,
  runReadme,
  type Script,
  startFakeLlm,
} from '@internal/fake-llm';
import { sqlExecutiveStorage } from '@x/executive';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, expect, it } from 'vitest';

const example = fileURLToPath(new URL('..', import.meta.url));
// The model server and the README's copy, closed after the test.
const opened: Array<FakeLlm | ReadmeRun> = [];
afterAll(async () => {
  for (const open of opened.reverse()) await open.close();
});

/** The model: it books the city the person names, then confirms with the tool's result. */
const booker: Script = ({ calls, userText }) => {
  const booked = calls.find((call) => call.name === 'book_trip');
  if (!booked) {
    const city = /to (\w+)/.exec(userText)?.[1] ?? 'Lisbon';
    return { toolCall: { name: 'book_trip', input: { city } } };
  }
  return { text: `Your trip: ${booked.result ?? ''}.` };
};

it(
  'starts, approves and completes a run in three processes, once; a declined run tells the model why and books nothing',
  async () => {
    const fake = await startFakeLlm(booker);
    opened.push(fake);
    const env = { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'fake' };
    const readme = await runReadme(example, { env });
    opened.push(readme);
    for (const { command, run } of readme.steps) {
      expect(run, command.line).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout, command.line).toMatch(promisedOutput(command));
    }
    const [, , work] = readme.steps.map((step) => step.run);
    // The approval reached the loop: the AI SDK ran the tool and the model read its result.
    expect(work?.stdout).toBe('Your trip: booked Lisbon.\n');
    const toolResults = fake.requests
      .map((r) => JSON.stringify(r.body))
      .filter((body) => body.includes('booked Lisbon'));
    expect(toolResults).toHaveLength(1);

    // A second worker finds nothing: the run was resumed once.
    const after = await readme.node(['dist/agent.js', 'work'], env);
    expect(after).toMatchObject({ code: 0, stdout: 'nothing to resume\n' });
    const bookings = path.join(readme.dir, '.state', 'bookings.log');
    expect(readFileSync(bookings, 'utf8')).toBe('Lisbon\n');

    // A second run, declined with a reason: the tool does not run, the model reads the reason.
    const porto = await readme.node(['dist/agent.js', 'start', 'Book me a trip to Porto'], env);
    expect(porto.stdout).toBe(
      'the run asks: Allow the agent to call book_trip with {"city":"Porto"}?\n',
    );
    const declined = await readme.node(['dist/agent.js', 'answer', 'decline', 'over budget']);
    expect(declined).toMatchObject({ code: 0, stderr: '' });
    const resumed = await readme.node(['dist/agent.js', 'work'], env);
    expect(resumed).toMatchObject({ code: 0, stderr: '' });
    expect(resumed.stdout).toContain('over budget');
    expect(readFileSync(bookings, 'utf8')).toBe('Lisbon\n');

    const pglite = new PGlite(path.join(readme.dir, '.state', 'pglite'));
    try {
      const storage = sqlExecutiveStorage(drizzle({ client: pglite }));
      const runs = await storage.runs().list({ conversationId: 'trip' });
      expect(runs.map((r) => [r.status, r.attempts, r.lostAttempts])).toEqual([
        ['completed', 1, 0],
        ['completed', 1, 0],
      ]);
      expect(await storage.pauses().listPending('trip')).toEqual([]);
      const finals = await Promise.all(
        runs.map(async (r) => JSON.stringify(await storage.runs().transcript(r.runId))),
      );
      expect(finals.filter((t) => t.includes('Your trip: booked Lisbon.'))).toHaveLength(1);
      expect(finals.filter((t) => t.includes('over budget'))).toHaveLength(1);
    } finally {
      await pglite.close();
    }
  },
  PROGRAMS_TEST_TIMEOUT_MS,
);
