import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SYSTEM_PROMPT } from '../src/demo/tools.js';
import { type FakeProvider, fixture, startFakeProvider } from './fixtures/fake-provider.js';
import { dataDirs, sharedStorage } from './run-cli.js';
import { expectPaired } from './transcript.js';

// The real built CLI against a local server speaking each provider's streaming API.
// Each test runs several commands: give them room on a busy machine, and share one data
// folder per provider, held open across the commands, so PGlite opens once, not per command.
const SLOW = 240_000;

const dataDir = dataDirs();
let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
  fake.queue.length = 0;
});

const last = <T>(list: T[]): T => list[list.length - 1] as T;

/** No real key or server from the developer's shell leaks in. */
function env(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    ANTHROPIC_API_KEY: 'test-anthropic-key',
    ANTHROPIC_BASE_URL: fake.url,
    OPENAI_API_KEY: 'test-openai-key',
    OPENAI_BASE_URL: `${fake.url}/v1`,
    ANTHROPIC_AUTH_TOKEN: undefined,
    RUNNER_MODEL: undefined,
    RUNNER_THINKING: undefined,
    RUNNER_MAX_TOKENS: undefined,
    RUNNER_MODEL_RETRIES: undefined,
    RUNNER_MODEL_BACKOFF_MS: '1',
    // A failed resume is due again at once, for the next `wake --once`.
    RUNNER_RETRY_BACKOFF_MS: '1',
    ...extra,
  };
}

const storage = sharedStorage();
const cli = (args: string[], extra?: Record<string, string>) =>
  storage.run(args, { env: env(extra) });

const THINKING = {
  type: 'thinking',
  thinking:
    'The person wants a trip but named no place. I must ask for the "destination" first — alone, per the rules.\n\tUnicode: Kyōto 京都 🚄 \\u00e9',
  signature: 'EqQBCkgIBxABGAIqQKk+Zb3lQe/2xN0Y8s1T5m0yR2f8nG+7hQ==',
};
const REDACTED = {
  type: 'redacted_thinking',
  data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabcEHQ==',
};
const ASKED = {
  role: 'assistant',
  content: [
    THINKING,
    REDACTED,
    { type: 'text', text: 'Happy to plan it. First, one question.' },
    {
      type: 'tool_use',
      id: 'toolu_01AskWhere',
      name: 'ask_user',
      input: { question: 'Where would you like to go?', options: ['Lisbon', 'Kyoto'] },
    },
  ],
};
const GOAL = { role: 'user', content: [{ type: 'text', text: 'Plan me a trip' }] };

let conversations = 0;

/** exec → waiting; returns the token. */
async function execWaiting(
  data: string,
  model: string,
  extra?: Record<string, string>,
): Promise<string> {
  const exec = await cli(
    [
      'exec',
      'Plan me a trip',
      '--conversation',
      `trip-${++conversations}`,
      '--model',
      model,
      '--data',
      data,
      '--json',
    ],
    extra,
  );
  expect(exec.code, exec.stderr).toBe(0);
  const waiting = last(exec.events);
  expect(waiting).toMatchObject({ type: 'run-waiting', status: 'waiting' });
  return waiting.token as string;
}

describe('anthropic:<model> through the CLI', { timeout: SLOW }, () => {
  let data: string;
  beforeAll(() => {
    data = dataDir();
  });

  it('exec → answer → wake: the resumed call sends the thinking turn byte for byte and one matching tool_result', async () => {
    fake.queue.push({ sse: fixture('anthropic-ask.sse') });
    const exec = await cli([
      'exec',
      'Plan me a trip',
      '--model',
      'anthropic:claude-x',
      '--data',
      data,
      '--json',
    ]);
    expect(exec.code, exec.stderr).toBe(0);
    // Text arrived as the stream's deltas, not in one piece at the end.
    expect(exec.events.filter((e) => e.type === 'text-delta').map((e) => e.text)).toEqual([
      'Happy to plan it. ',
      'First, one question.',
    ]);
    const waiting = last(exec.events);
    expect(waiting).toMatchObject({ type: 'run-waiting', question: 'Where would you like to go?' });
    const first = fake.requests[0];
    expect(first?.url).toBe('/v1/messages');
    expect(first?.body).toMatchObject({
      model: 'claude-x',
      stream: true,
      system: SYSTEM_PROMPT,
      messages: [GOAL],
    });

    const answered = await cli([
      'answer',
      waiting.token as string,
      '--option',
      '1',
      '--data',
      data,
    ]);
    expect(answered.code, answered.stderr).toBe(0);
    fake.queue.push({ sse: fixture('anthropic-final.sse') });
    const woke = await cli(['wake', '--once', '--data', data, '--json']);
    expect(woke.code, woke.stderr).toBe(0);
    expect(fake.requests).toHaveLength(2);
    const resumed = fake.requests[1];
    expect(resumed?.body).toEqual({
      ...first?.body,
      messages: [
        GOAL,
        ASKED,
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_01AskWhere', content: 'Lisbon' }],
        },
      ],
    });
    // Byte for byte, as the API checks them.
    expect(resumed?.raw).toContain(JSON.stringify(THINKING));
    expect(resumed?.raw).toContain(JSON.stringify(REDACTED));
    const done = last(woke.events);
    expect(done.type).toBe('run-completed');
    const messages = expectPaired(done.messages);
    expect(messages.at(-1)).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Lisbon it is: five days, booked.' }],
    });
  });

  it('chat prints the streamed text and resumes with the thinking turn unchanged', async () => {
    fake.queue.push({ sse: fixture('anthropic-ask.sse') }, { sse: fixture('anthropic-final.sse') });
    const chat = await storage.run(
      ['chat', '--session', 'provider-chat', '--model', 'anthropic:claude-x', '--data', data],
      { env: env(), input: 'Plan me a trip\n1\n/quit\n' },
    );
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain('Happy to plan it. First, one question.');
    expect(chat.stdout).toContain('Where would you like to go?');
    expect(chat.stdout).toContain('Lisbon it is: five days, booked.');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.body.messages).toEqual([
      GOAL,
      ASKED,
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_01AskWhere', content: 'Lisbon' }],
      },
    ]);
  });

  it('a 429 is retried (retry-after honoured) and the run goes on', async () => {
    fake.queue.push(
      {
        status: 429,
        headers: { 'retry-after': '0' },
        body: {
          type: 'error',
          error: {
            type: 'rate_limit_error',
            message: 'Number of requests has exceeded your rate limit',
          },
        },
      },
      { sse: fixture('anthropic-ask.sse') },
    );
    await execWaiting(data, 'anthropic:claude-x');
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.raw).toBe(fake.requests[0]?.raw);
  });

  it('500 three times gives up, leaving the pause answered and retryable; the next wake completes it', async () => {
    fake.queue.push({ sse: fixture('anthropic-ask.sse') });
    const token = await execWaiting(data, 'anthropic:claude-x');
    expect((await cli(['answer', token, '--accept', 'Kyoto', '--data', data])).code).toBe(0);

    const down = {
      status: 500,
      body: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } },
    };
    fake.queue.push(down, down, down);
    const failed = await cli(['wake', '--once', '--data', data, '--json'], {
      RUNNER_MODEL_RETRIES: '2',
    });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(
      '[anthropic] 500 api_error Internal server error (gave up after 3 attempts)',
    );
    expect(failed.stderr).toContain('it stays answered');
    expect(fake.requests).toHaveLength(4);
    expect(failed.events.filter((e) => e.type === 'resumed')).toHaveLength(0);

    // The server is back: the same answered pause is resumed, once.
    fake.queue.push({ sse: fixture('anthropic-final.sse') });
    const woke = await cli(['wake', '--once', '--data', data, '--json']);
    expect(woke.code, woke.stderr).toBe(0);
    expect(woke.events.filter((e) => e.type === 'resumed')).toHaveLength(1);
    expect(last(woke.events).type).toBe('run-completed');
    const resumed = last(fake.requests).body.messages as unknown[];
    expect(resumed).toEqual([
      GOAL,
      ASKED,
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_01AskWhere', content: 'Kyoto' }],
      },
    ]);
    const again = await cli(['wake', '--once', '--data', data, '--json']);
    expect(again.events.filter((e) => e.type === 'resumed')).toHaveLength(0);
  });

  it('a non-retryable error ends exec at once with a clear message', async () => {
    fake.queue.push({
      status: 401,
      body: {
        type: 'error',
        error: { type: 'authentication_error', message: 'invalid x-api-key' },
      },
    });
    const exec = await cli(['exec', 'Plan', '--model', 'anthropic:claude-x', '--data', data]);
    expect(exec.code).toBe(1);
    expect(exec.stderr).toContain('[anthropic] 401 authentication_error invalid x-api-key');
    expect(fake.requests).toHaveLength(1);
  });

  it('a missing key is one line naming the variable, before any work (exit 2, no data folder)', async () => {
    for (const [model, variable] of [
      ['anthropic:claude-x', 'ANTHROPIC_API_KEY'],
      ['openai:gpt-x', 'OPENAI_API_KEY'],
    ] as const) {
      const fresh = path.join(dataDir(), 'fresh');
      const run = await cli(['exec', 'Plan', '--model', model, '--data', fresh], {
        ANTHROPIC_API_KEY: '',
        OPENAI_API_KEY: '',
        OPENAI_BASE_URL: '',
      });
      expect(run.code).toBe(2);
      expect(run.stderr.split('\n')[0]).toContain(`${variable} is not set`);
      expect(existsSync(fresh)).toBe(false);
    }
    expect(fake.requests).toHaveLength(0);
  });
});

describe('openai:<model> through the CLI', { timeout: SLOW }, () => {
  let data: string;
  beforeAll(() => {
    data = dataDir();
  });

  it('parallel calls follow the singleton rule; the resumed call sends tool_calls then exactly one tool message', async () => {
    fake.queue.push({ sse: fixture('openai-parallel.sse') }, { sse: fixture('openai-ask.sse') });
    const exec = await cli([
      'exec',
      'Plan me a trip',
      '--model',
      'openai:gpt-x',
      '--data',
      data,
      '--json',
    ]);
    expect(exec.code, exec.stderr).toBe(0);
    const waiting = last(exec.events);
    expect(waiting).toMatchObject({ type: 'run-waiting', question: 'Which month do you travel?' });
    expect(exec.events.filter((e) => e.type === 'text-delta').map((e) => e.text)).toEqual([
      'Kyoto is ',
      'light rain now. Asking alone.',
    ]);
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[0]?.url).toBe('/v1/chat/completions');
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer test-openai-key');

    await cli(['answer', waiting.token as string, '--option', '1', '--data', data]);
    fake.queue.push({ sse: fixture('openai-final.sse') });
    const woke = await cli(['wake', '--once', '--data', data, '--json']);
    expect(woke.code, woke.stderr).toBe(0);
    const resumed = fake.requests[2]?.body;
    const messages = resumed?.messages as Array<Record<string, unknown>>;
    expect(resumed).toMatchObject({ model: 'gpt-x', stream: true });
    expect(messages.slice(0, 2)).toEqual([
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: 'Plan me a trip' },
    ]);
    // The first message's siblings: get_weather ran once, ask_user got the "ask alone" error.
    expect(messages[2]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_Weather1',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Kyoto"}' },
        },
        {
          id: 'call_Ask1',
          type: 'function',
          function: { name: 'ask_user', arguments: '{"question":"Which month?"}' },
        },
      ],
    });
    expect(messages[3]).toMatchObject({ role: 'tool', tool_call_id: 'call_Weather1' });
    expect(messages[4]).toMatchObject({ role: 'tool', tool_call_id: 'call_Ask1' });
    expect(String(messages[4]?.content)).toContain('must be the only tool call');
    expect(messages.slice(5)).toEqual([
      {
        role: 'assistant',
        content: 'Kyoto is light rain now. Asking alone.',
        tool_calls: [
          {
            id: 'call_Ask2',
            type: 'function',
            function: {
              name: 'ask_user',
              arguments: '{"question":"Which month do you travel?","options":["April","November"]}',
            },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_Ask2', content: 'April' },
    ]);
    const done = last(woke.events);
    expect(done.type).toBe('run-completed');
    expectPaired(done.messages);
  });

  it('a local OpenAI-compatible server needs no key; 500 three times leaves the pause retryable', async () => {
    const local = { OPENAI_API_KEY: '' };
    fake.queue.push({ sse: fixture('openai-ask.sse') });
    const token = await execWaiting(data, 'openai:llama3.2', local);
    expect((await cli(['answer', token, '--accept', 'November', '--data', data], local)).code).toBe(
      0,
    );
    const down = {
      status: 503,
      body: { error: { message: 'model is loading', type: 'server_error' } },
    };
    fake.queue.push(down, down, down);
    const failed = await cli(['wake', '--once', '--data', data], {
      ...local,
      RUNNER_MODEL_RETRIES: '2',
    });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(
      '[openai] 503 server_error model is loading (gave up after 3 attempts)',
    );
    expect(fake.requests).toHaveLength(4);

    fake.queue.push({ sse: fixture('openai-final.sse') });
    const woke = await cli(['wake', '--once', '--data', data, '--json'], local);
    expect(woke.code, woke.stderr).toBe(0);
    expect(last(woke.events).type).toBe('run-completed');
    const messages = last(fake.requests).body.messages as unknown[];
    expect(messages.slice(-1)).toEqual([
      { role: 'tool', tool_call_id: 'call_Ask2', content: 'November' },
    ]);
    expect(last(fake.requests).body.model).toBe('llama3.2');
  });
});
