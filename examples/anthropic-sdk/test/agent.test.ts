import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type FakeLlm,
  PROGRAMS_TEST_TIMEOUT_MS,
  promisedOutput,
  type ReadmeRun,
  runProgram,
  runReadme,
  startFakeLlm,
  tripPlanner,
} from '@internal/fake-llm';
import { afterAll, beforeAll, expect, it } from 'vitest';

const example = fileURLToPath(new URL('..', import.meta.url));
let fake: FakeLlm;
let readme: ReadmeRun | undefined;
beforeAll(async () => {
  fake = await startFakeLlm(tripPlanner);
});
afterAll(async () => {
  await fake.close();
  await readme?.close();
});

it(
  'stops on a question in one process and resumes with the answer in another',
  async () => {
    readme = await runReadme(example, {
      env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'fake' },
    });
    // Every command printed what its README comment promises.
    for (const { command, run } of readme.steps) {
      expect(run, command.line).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout, command.line).toMatch(promisedOutput(command));
    }
    const state = path.join(readme.dir, '.state');
    const [first, second] = readme.steps.map((step) => step.run);

    expect(first?.stdout).toContain('waiting for an answer to toolu_fake_1');

    expect(second?.stdout).toBe('Your trip to Lisbon: sunny in Lisbon.\n');
    expect(readdirSync(state)).toEqual([expect.stringMatching(/^[0-9a-f-]{36}\.resolved$/)]);

    // The second process sent the first one's turn exactly, with the answer paired to it.
    const resumed = fake.requests[1]?.body;
    expect(resumed?.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Plan me a trip' }] },
      {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: 'toolu_fake_1',
            name: 'ask_user',
            input: { question: 'Where would you like to go?' },
          },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_fake_1', content: 'Lisbon' }],
      },
    ]);
    expect(fake.requests).toHaveLength(3);

    // A second answer says the question was already answered, and runs nothing.
    const requests = fake.requests.length;
    const again = await readme.node(['dist/agent.js', 'answer', 'Lisbon']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^nothing waits for an answer: the question in \.state was already answered/,
    );
    expect(fake.requests).toHaveLength(requests);

    // A model server that restarted hands out toolu_fake_1 again: a new request, not the old one.
    const restarted = await startFakeLlm(tripPlanner);
    try {
      const env = { ANTHROPIC_BASE_URL: restarted.url, ANTHROPIC_API_KEY: 'fake' };
      const agent = (...args: string[]) =>
        runProgram('dist/agent.js', args, env, 60_000, readme?.dir);
      const started = await agent('start', 'Plan me a trip');
      expect(started).toMatchObject({ code: 0, stderr: '' });
      expect(started.stdout).toContain('waiting for an answer to toolu_fake_1');
      const answered = await agent('answer', 'Porto');
      expect(answered).toMatchObject({ code: 0, stderr: '' });
      expect(answered.stdout).toBe('Your trip to Porto: sunny in Porto.\n');
    } finally {
      await restarted.close();
    }

    // The state is in .state/, which git ignores.
    const kept = path.join(example, '.state', readdirSync(state)[0] ?? '');
    execFileSync('git', ['check-ignore', '-q', kept], { cwd: example });
  },
  PROGRAMS_TEST_TIMEOUT_MS,
);
