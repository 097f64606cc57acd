import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type FakeLlm,
  PROGRAMS_TEST_TIMEOUT_MS,
  runProgram,
  startFakeLlm,
  tripPlanner,
} from '@internal/fake-llm';
import { afterAll, beforeAll, expect, it } from 'vitest';

const agent = fileURLToPath(new URL('../dist/agent.js', import.meta.url));
let fake: FakeLlm;
let state: string;
beforeAll(async () => {
  fake = await startFakeLlm(tripPlanner);
  state = mkdtempSync(path.join(tmpdir(), 'example-ai-sdk-'));
});
afterAll(async () => {
  await fake.close();
  rmSync(state, { recursive: true, force: true });
});

it(
  'a client-side tool and a tool approval each suspend the turn; later processes resume it',
  async () => {
    const env = { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'fake', STATE_DIR: state };

    const first = await runProgram(agent, ['start', 'Plan me a trip'], env);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toBe(
      'waiting for an answer to ask_user {"question":"Where would you like to go?"}\n',
    );

    const second = await runProgram(agent, ['answer', 'Lisbon'], env);
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toBe('waiting for approval of book_trip {"city":"Lisbon"}\n');
    expect(readdirSync(state).sort()).toEqual(['toolu_fake_1.resolved', 'toolu_fake_2.json']);

    const third = await runProgram(agent, ['answer', 'yes'], env);
    expect(third).toMatchObject({ code: 0, stderr: '' });
    expect(third.stdout).toBe('Your trip to Lisbon: booked Lisbon, reference X-42.\n');
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
  },
  PROGRAMS_TEST_TIMEOUT_MS,
);
