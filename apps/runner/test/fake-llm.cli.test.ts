import { type FakeLlm, startFakeLlm, tripPlanner } from '@internal/fake-llm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataDirs, runInProcess } from './run-cli.js';

// The real providers' path without a key: the built CLI's `anthropic:` and `openai:` models,
// through the official SDKs, against tools/fake-llm as its README tells a user to run it.
const SLOW = 240_000;

const dataDir = dataDirs();
let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm(tripPlanner);
});
afterAll(async () => {
  await fake.close();
});

/** The variables tools/fake-llm prints; no real key or server from the shell leaks in. */
function env(): Record<string, string | undefined> {
  return {
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'fake',
    OPENAI_BASE_URL: `${fake.url}/v1`,
    OPENAI_API_KEY: 'fake',
    ANTHROPIC_AUTH_TOKEN: undefined,
    RUNNER_MODEL: undefined,
    RUNNER_THINKING: undefined,
  };
}

describe('runner against tools/fake-llm', { timeout: SLOW }, () => {
  for (const [model, city] of [
    ['anthropic:fake', 'Lisbon'],
    ['openai:fake', 'Kyoto'],
  ] as const) {
    it(`${model}: exec asks, answer, wake completes the streamed turn`, async () => {
      const data = dataDir();
      const cli = (args: string[]) => runInProcess([...args, '--data', data], { env: env() });
      const exec = await cli(['exec', 'Plan me a trip', '--model', model, '--json']);
      expect(exec.code, exec.stderr).toBe(0);
      const waiting = exec.events.at(-1);
      expect(waiting).toMatchObject({
        type: 'run-waiting',
        question: 'Where would you like to go?',
      });
      const answered = await cli(['answer', String(waiting?.token), '--accept', city]);
      expect(answered.code, answered.stderr).toBe(0);
      const woke = await cli(['wake', '--once', '--json']);
      expect(woke.code, woke.stderr).toBe(0);
      // The answer reached the model's next call, which the runner ran, then the final text.
      const text = woke.events
        .filter((e) => e.type === 'text-delta')
        .map((e) => e.text)
        .join('');
      expect(text).toMatch(new RegExp(`^Your trip to ${city}: .+\\.$`));
      expect(woke.events.at(-1)).toMatchObject({ type: 'run-completed' });
      expect(fake.requests.every((r) => r.body.stream === true)).toBe(true);
    });
  }
});
