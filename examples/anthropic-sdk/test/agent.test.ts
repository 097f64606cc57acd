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
  state = mkdtempSync(path.join(tmpdir(), 'example-anthropic-'));
});
afterAll(async () => {
  await fake.close();
  rmSync(state, { recursive: true, force: true });
});

it(
  'stops on a question in one process and resumes with the answer in another',
  async () => {
    const env = { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'fake', STATE_DIR: state };

    const first = await runProgram(agent, ['start', 'Plan me a trip'], env);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toContain('waiting for an answer to toolu_fake_1');
    expect(readdirSync(state)).toEqual(['toolu_fake_1.json']);

    const second = await runProgram(agent, ['answer', 'Lisbon'], env);
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toBe('Your trip to Lisbon: sunny in Lisbon.\n');
    expect(readdirSync(state)).toEqual(['toolu_fake_1.resolved']);

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
  },
  PROGRAMS_TEST_TIMEOUT_MS,
);
