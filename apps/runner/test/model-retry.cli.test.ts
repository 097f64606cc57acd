import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, fixture, startFakeProvider } from './fixtures/fake-provider.js';
import { runCli, tempDataDir } from './run-cli.js';

// A stream cut mid-answer is retried; the retry is marked so a reader drops the cut text.

let fake: FakeProvider;
const data = tempDataDir();
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake.close();
  rmSync(data, { recursive: true, force: true });
});

/** The recorded answer up to its first text delta: the connection ends there. */
function cutAfterFirstText(sse: string): string {
  const events = sse.split('\n\n');
  const first = events.findIndex((event) => event.includes('"text_delta"'));
  return `${events.slice(0, first + 1).join('\n\n')}\n\n`;
}

const env = () => ({
  ANTHROPIC_API_KEY: 'test-anthropic-key',
  ANTHROPIC_BASE_URL: fake.url,
  RUNNER_MODEL_RETRIES: '2',
  RUNNER_MODEL_BACKOFF_MS: '1',
});

describe('a retried model call is marked', { timeout: 240_000 }, () => {
  it('--json: a model-retry event separates the cut attempt’s text from the retry’s', async () => {
    const full = fixture('anthropic-ask.sse');
    fake.queue.push({ sse: cutAfterFirstText(full) }, { sse: full });
    const exec = await runCli(
      ['exec', 'Plan me a trip', '--model', 'anthropic:claude-x', '--data', data, '--json'],
      { env: env() },
    );
    expect(exec.code, exec.stderr).toBe(0);
    const types = exec.events.map((e) => e.type);
    const retry = types.indexOf('model-retry');
    expect(retry).toBeGreaterThan(0);
    expect(exec.events[retry]).toMatchObject({ attempt: 1, conversationId: expect.any(String) });
    const textOf = (events: typeof exec.events) =>
      events
        .filter((e) => e.type === 'text-delta')
        .map((e) => e.text)
        .join('');
    expect(textOf(exec.events.slice(0, retry))).toBe('Happy to plan it. ');
    expect(textOf(exec.events.slice(retry))).toBe('Happy to plan it. First, one question.');
  });

  it('text mode: a line says the text above is void before the retry streams', async () => {
    const full = fixture('anthropic-ask.sse');
    fake.queue.push({ sse: cutAfterFirstText(full) }, { sse: full });
    const exec = await runCli(
      ['exec', 'Plan me a trip', '--model', 'anthropic:claude-x', '--data', data],
      { env: env() },
    );
    expect(exec.code, exec.stderr).toBe(0);
    expect(exec.stdout).toMatch(
      /assistant: Happy to plan it. \n {2}↻ model call attempt 1 failed \(.*\); the text above is void, trying again\nassistant: Happy to plan it. First, one question./,
    );
  });
});
