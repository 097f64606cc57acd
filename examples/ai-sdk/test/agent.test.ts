import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type FakeLlm,
  PROGRAMS_TEST_TIMEOUT_MS,
  promisedOutput,
  type ReadmeRun,
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
  'a client-side tool and a tool approval each suspend the turn; later processes resume it',
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
    const [first, second, third] = readme.steps.map((step) => step.run);

    expect(first?.stdout).toBe(
      'waiting for an answer to ask_user {"question":"Where would you like to go?"}\n',
    );

    expect(second?.stdout).toBe('waiting for approval of book_trip {"city":"Lisbon"}\n');

    expect(third?.stdout).toBe('Your trip to Lisbon: booked Lisbon, reference X-42.\n');
    expect(readdirSync(state).sort()).toEqual(['toolu_fake_1.resolved', 'toolu_fake_2.resolved']);

    // The approved tool ran in the third process, and the model got its result paired.
    const last = fake.requests.at(-1)?.body.messages as Array<{ role: string; content: unknown }>;
    expect(last.at(-1)).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_fake_2',
          content: 'booked Lisbon, reference X-42',
        },
      ],
    });
    expect(fake.requests.map((r) => r.body.system)).toEqual(
      Array(3).fill([
        {
          type: 'text',
          text: 'You plan and book trips. Ask the person when you need to know something.',
        },
      ]),
    );

    // A second answer says the question was already answered, and runs nothing.
    const requests = fake.requests.length;
    const again = await readme.node(['dist/agent.js', 'answer', 'yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^nothing waits for an answer: the question in \.state was already answered/,
    );
    expect(fake.requests).toHaveLength(requests);

    // The state is in .state/, which git ignores.
    const kept = path.join(example, '.state', readdirSync(state)[0] ?? '');
    execFileSync('git', ['check-ignore', '-q', kept], { cwd: example });
  },
  PROGRAMS_TEST_TIMEOUT_MS,
);
