import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import {
  type FakeLlm,
  namedScripts,
  PROGRAMS_TEST_TIMEOUT_MS,
  promisedOutput,
  type ReadmeRun,
  readmeFakeScript,
  runReadme,
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

it(
  "runs the README's three commands: the graph asks, is answered, and the worker resumes it once to its end",
  async () => {
    const fake = await startFakeLlm(namedScripts[readmeFakeScript(example)].script);
    opened.push(fake);
    const readme = await runReadme(example, {
      env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'fake' },
    });
    opened.push(readme);
    for (const { command, run } of readme.steps) {
      expect(run, command.line).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout, command.line).toMatch(promisedOutput(command));
    }
    const [, , work] = readme.steps.map((step) => step.run);
    expect(work?.stdout).toBe('Your trip to Lisbon: sunny in Lisbon.\n');
    // Nothing is left to resume: a second worker resumes nothing.
    expect((await readme.node(['dist/agent.js', 'work'])).stdout).toBe('nothing to resume\n');

    // One run, completed on its first attempt; its final state holds the answer as the tool's result.
    const pglite = new PGlite(path.join(readme.dir, '.state', 'pglite'));
    try {
      const storage = sqlExecutiveStorage(drizzle({ client: pglite }));
      const runs = await storage.runs().list({ conversationId: 'trip' });
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ status: 'completed', attempts: 1, lostAttempts: 0 });
      expect(runs[0]?.meta).toMatchObject({ kind: 'langgraph thread' });
      const [final] = (await storage.runs().transcript(runs[0]?.runId ?? '')) ?? [];
      const block = final?.content[0];
      const state = JSON.parse(block?.type === 'text' ? block.text : 'null');
      const results = state.messages.flatMap((m: { content: unknown }) =>
        Array.isArray(m.content) ? m.content.filter((b) => b.type === 'tool_result') : [],
      );
      expect(results.map((r: { content: string }) => r.content)).toEqual([
        'Lisbon',
        'sunny in Lisbon',
      ]);
      // The model was called three times: the question, the weather, the final answer.
      expect(fake.requests).toHaveLength(3);
    } finally {
      await pglite.close();
    }
  },
  PROGRAMS_TEST_TIMEOUT_MS,
);
