import type { ModelUsage } from '@x/executive';
import { parseMessages, toolResult, userMessage } from '@x/wire';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SYSTEM_PROMPT, toolSpecs } from '../src/demo/tools.js';
import { failureOf } from '../src/failure.js';
import { AnthropicModel } from '../src/model/anthropic.js';
import { type RetryPolicy, retryAfterMs, withRetry } from '../src/model/call-retry.js';
import { ModelError, modelFromId } from '../src/model/index.js';
import { OpenAIModel } from '../src/model/openai.js';
import { type FakeProvider, fixture, startFakeProvider } from './fixtures/fake-provider.js';

const fast: RetryPolicy = { retries: 3, baseMs: 1, maxDelayMs: 5, maxRetryAfterMs: 60_000 };

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
  fake.queue.length = 0;
});

const request = (onText?: (t: string) => void) => ({
  system: SYSTEM_PROMPT,
  messages: [userMessage('Plan me a trip')],
  tools: toolSpecs,
  ...(onText ? { onText } : {}),
});

describe('modelFromId', () => {
  it('refuses a missing key with a one-line error naming the variable', () => {
    for (const [id, variable] of [
      ['anthropic:claude-x', 'ANTHROPIC_API_KEY'],
      ['openai:gpt-x', 'OPENAI_API_KEY'],
    ] as const) {
      let error: unknown;
      try {
        modelFromId(id, {});
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain(variable);
      expect((error as Error).message).not.toContain('\n');
      expect(failureOf(error)).toBe('usage');
    }
  });

  it('builds each provider from the environment; a local OpenAI-compatible server needs no key', () => {
    expect(modelFromId('anthropic:claude-x', { ANTHROPIC_API_KEY: 'k' }).id).toBe(
      'anthropic:claude-x',
    );
    expect(modelFromId('openai:gpt-x', { OPENAI_API_KEY: 'k' }).id).toBe('openai:gpt-x');
    expect(
      modelFromId('openai:llama3.2', { OPENAI_BASE_URL: 'http://localhost:11434/v1' }).id,
    ).toBe('openai:llama3.2');
    expect(() => modelFromId('anthropic:', { ANTHROPIC_API_KEY: 'k' })).toThrow(/names no model/);
    expect(() => modelFromId('gemini:x', {})).toThrow(/unknown model/);
    expect(() =>
      modelFromId('anthropic:c', { ANTHROPIC_API_KEY: 'k', RUNNER_MODEL_RETRIES: '-1' }),
    ).toThrow(/RUNNER_MODEL_RETRIES/);
    expect(() =>
      modelFromId('anthropic:c', { ANTHROPIC_API_KEY: 'k', RUNNER_THINKING: '10' }),
    ).toThrow(/RUNNER_THINKING/);
  });
});

describe('retry', () => {
  const transient = (retryAfterMs?: number) => () => ({
    retryable: true,
    retryAfterMs,
    message: '429 rate_limit_error',
  });

  it('retries transient failures until one succeeds, honouring retry-after', async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await withRetry(
      'test',
      async () => {
        calls++;
        if (calls < 3) throw new Error('busy');
        return 'ok';
      },
      transient(1234),
      fast,
      { sleep: async (ms) => void waits.push(ms) },
    );
    expect(result).toBe('ok');
    expect(waits).toEqual([1234, 1234]);
  });

  it('gives up after the bounded retries with a retryable ModelError', async () => {
    let calls = 0;
    const error = await withRetry(
      'test',
      async () => {
        calls++;
        throw new Error('500');
      },
      transient(),
      fast,
      { sleep: async () => {} },
    ).catch((e: unknown) => e);
    expect(calls).toBe(4);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).retryable).toBe(true);
    expect((error as ModelError).message).toMatch(
      /^\[test\] 429 rate_limit_error \(gave up after 4 attempts\)$/,
    );
  });

  it('does not retry a non-retryable failure, nor wait past maxRetryAfterMs', async () => {
    let calls = 0;
    const bad = await withRetry(
      'test',
      async () => {
        calls++;
        throw new Error('400');
      },
      () => ({ retryable: false, message: '400 invalid_request_error' }),
      fast,
    ).catch((e: unknown) => e);
    expect(calls).toBe(1);
    expect((bad as ModelError).retryable).toBe(false);

    const long = await withRetry(
      'test',
      async () => Promise.reject(new Error('429')),
      transient(3_600_000),
      fast,
    ).catch((e: unknown) => e);
    expect((long as ModelError).retryable).toBe(true);
    expect((long as ModelError).message).toContain('wait 3600s');
  });

  it("backs off by @x/postgres-kit's backoffMs (doubling, capped, jitter over the upper half); reads retry-after in both spellings", async () => {
    const waits: number[] = [];
    await withRetry(
      'test',
      async () => Promise.reject(new Error('busy')),
      transient(),
      { ...fast, retries: 5, baseMs: 100, maxDelayMs: 1000 },
      { sleep: async (ms) => void waits.push(ms) },
    ).catch(() => {});
    const ceilings = [100, 200, 400, 800, 1000];
    expect(waits).toHaveLength(ceilings.length);
    waits.forEach((wait, i) => {
      expect(wait).toBeGreaterThanOrEqual((ceilings[i] ?? 0) / 2);
      expect(wait).toBeLessThanOrEqual(ceilings[i] ?? 0);
    });
    const headers = (h: Record<string, string>) => new Headers(h);
    expect(retryAfterMs(headers({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(headers({ 'retry-after-ms': '250', 'retry-after': '9' }))).toBe(250);
    expect(retryAfterMs(headers({ 'retry-after': new Date(10_000).toUTCString() }), 4_000)).toBe(
      6000,
    );
    expect(retryAfterMs(headers({}))).toBeUndefined();
  });
});

describe('AnthropicModel (streaming Messages API)', () => {
  const model = () =>
    new AnthropicModel('claude-x', {
      apiKey: 'test-key',
      baseURL: fake.url,
      maxTokens: 1000,
      retry: fast,
    });

  it('streams text per delta, assembles partial tool JSON, keeps thinking byte for byte', async () => {
    fake.queue.push({ sse: fixture('anthropic-ask.sse') });
    const deltas: string[] = [];
    const message = await model().generate(request((t) => deltas.push(t)));
    expect(deltas).toEqual(['Happy to plan it. ', 'First, one question.']);
    expect(message).toEqual({
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking:
            'The person wants a trip but named no place. I must ask for the "destination" first — alone, per the rules.\n\tUnicode: Kyōto 京都 🚄 \\u00e9',
          signature: 'EqQBCkgIBxABGAIqQKk+Zb3lQe/2xN0Y8s1T5m0yR2f8nG+7hQ==',
        },
        {
          type: 'redacted_thinking',
          data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabcEHQ==',
        },
        { type: 'text', text: 'Happy to plan it. First, one question.' },
        {
          type: 'tool_use',
          id: 'toolu_01AskWhere',
          name: 'ask_user',
          input: { question: 'Where would you like to go?', options: ['Lisbon', 'Kyoto'] },
        },
      ],
    });
    parseMessages([userMessage('x'), message]);
    const [sent] = fake.requests;
    expect(sent?.url).toBe('/v1/messages');
    // The SDK sends the key as x-api-key or as a bearer token, depending on its version.
    expect([sent?.headers['x-api-key'], sent?.headers.authorization]).toContain(
      sent?.headers['x-api-key'] ? 'test-key' : 'Bearer test-key',
    );
    expect(sent?.headers['anthropic-version']).toBeTruthy();
    expect(sent?.body).toMatchObject({
      model: 'claude-x',
      max_tokens: 1000,
      stream: true,
      system: SYSTEM_PROMPT,
    });
    const tools = sent?.body.tools as Array<{
      name: string;
      input_schema: Record<string, unknown>;
    }>;
    expect(tools.map((t) => t.name)).toEqual(toolSpecs.map((t) => t.name));
    const ask = tools[0]?.input_schema;
    expect(ask).toMatchObject({
      type: 'object',
      required: ['question'],
      properties: { question: { type: 'string' } },
    });
    expect(ask).not.toHaveProperty('$schema');
  });

  it('reports the tokens used: input at message_start, output as message_delta counts it', async () => {
    fake.queue.push({ sse: fixture('anthropic-ask.sse') });
    const usage: ModelUsage[] = [];
    await model().generate({ ...request(), onUsage: (u) => usage.push(u) });
    expect(usage).toEqual([{ inputTokens: 912, outputTokens: 4 }, { outputTokens: 187 }]);
  });

  it('sends a thinking turn back unchanged, and a thinking config when set', async () => {
    fake.queue.push({ sse: fixture('anthropic-ask.sse') }, { sse: fixture('anthropic-final.sse') });
    const thinking = new AnthropicModel('claude-x', {
      apiKey: 'k',
      baseURL: fake.url,
      maxTokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 2000 },
      retry: fast,
    });
    const asked = await thinking.generate(request());
    const use = asked.content.at(-1) as { id: string };
    const messages = [
      userMessage('Plan me a trip'),
      asked,
      userMessage(toolResult(use.id, 'Lisbon')),
    ];
    const done = await thinking.generate({ ...request(), messages });
    expect(done.content).toEqual([{ type: 'text', text: 'Lisbon it is: five days, booked.' }]);
    const resumed = fake.requests[1];
    expect(resumed?.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2000 });
    expect(resumed?.body.messages).toEqual(JSON.parse(JSON.stringify(messages)));
    // Byte for byte: the blocks appear in the raw body exactly as serialized.
    for (const block of asked.content.slice(0, 2))
      expect(resumed?.raw).toContain(JSON.stringify(block));
  });

  it('classifies failures: 400 is not retried, a reset and an overloaded stream are', async () => {
    fake.queue.push({
      status: 400,
      body: {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'max_tokens: too large' },
      },
    });
    const bad = await model()
      .generate(request())
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ModelError);
    expect((bad as ModelError).retryable).toBe(false);
    expect((bad as ModelError).message).toBe(
      '[anthropic] 400 invalid_request_error max_tokens: too large',
    );
    expect(fake.requests).toHaveLength(1);

    fake.queue.push(
      { reset: true },
      {
        sse: 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
      },
      { sse: fixture('anthropic-final.sse').split('event: message_stop')[0] as string },
      {
        status: 529,
        body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      },
      { sse: fixture('anthropic-final.sse') },
    );
    const ok = await new AnthropicModel('claude-x', {
      apiKey: 'k',
      baseURL: fake.url,
      maxTokens: 1000,
      retry: { ...fast, retries: 4 },
    }).generate(request());
    expect(ok.content).toEqual([{ type: 'text', text: 'Lisbon it is: five days, booked.' }]);
    expect(fake.requests).toHaveLength(6);
  });
});

describe('OpenAIModel (streaming Chat Completions)', () => {
  const model = () =>
    new OpenAIModel('gpt-x', { apiKey: 'test-key', baseURL: `${fake.url}/v1`, retry: fast });

  it('assembles parallel tool calls from interleaved argument pieces, through the @x/wire converter', async () => {
    fake.queue.push({ sse: fixture('openai-parallel.sse') });
    const message = await model().generate(request());
    expect(message).toEqual({
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'call_Weather1', name: 'get_weather', input: { city: 'Kyoto' } },
        {
          type: 'tool_use',
          id: 'call_Ask1',
          name: 'ask_user',
          input: { question: 'Which month?' },
        },
      ],
    });
    const [sent] = fake.requests;
    expect(sent?.url).toBe('/v1/chat/completions');
    expect(sent?.headers.authorization).toBe('Bearer test-key');
    expect(sent?.body).toMatchObject({
      model: 'gpt-x',
      stream: true,
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: 'Plan me a trip' },
      ],
    });
    const tools = sent?.body.tools as Array<{
      type: string;
      function: { name: string; parameters: Record<string, unknown> };
    }>;
    expect(tools.map((t) => t.function.name)).toEqual(toolSpecs.map((t) => t.name));
    expect(tools[0]).toMatchObject({
      type: 'function',
      function: { parameters: { type: 'object', required: ['question'] } },
    });
    expect(tools[0]?.function.parameters).not.toHaveProperty('$schema');
  });

  it('asks for the usage chunk and reports its tokens; a stream without one reports none', async () => {
    fake.queue.push({ sse: fixture('openai-final.sse') }, { sse: fixture('openai-ask.sse') });
    const usage: ModelUsage[] = [];
    await model().generate({ ...request(), onUsage: (u) => usage.push(u) });
    expect(fake.requests[0]?.body).toMatchObject({ stream_options: { include_usage: true } });
    expect(usage).toEqual([{ inputTokens: 1310, outputTokens: 9 }]);
    await model().generate({ ...request(), onUsage: (u) => usage.push(u) });
    expect(usage).toHaveLength(1);
  });

  it('streams text per delta', async () => {
    fake.queue.push({ sse: fixture('openai-ask.sse') });
    const deltas: string[] = [];
    const message = await model().generate(request((t) => deltas.push(t)));
    expect(deltas).toEqual(['Kyoto is ', 'light rain now. Asking alone.']);
    expect(message.content[0]).toEqual({
      type: 'text',
      text: 'Kyoto is light rain now. Asking alone.',
    });
    expect(message.content[1]).toMatchObject({
      type: 'tool_use',
      id: 'call_Ask2',
      name: 'ask_user',
    });
  });

  it('retries a 429 (retry-after) and a reset; a 401 is not retried; broken JSON is a clear error', async () => {
    fake.queue.push(
      {
        status: 429,
        headers: { 'retry-after': '0' },
        body: {
          error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' },
        },
      },
      { reset: true },
      { sse: fixture('openai-final.sse') },
    );
    const ok = await model().generate(request());
    expect(ok.content).toEqual([{ type: 'text', text: 'Kyoto in April: cherry blossoms.' }]);
    expect(fake.requests).toHaveLength(3);

    fake.queue.push({
      status: 401,
      body: {
        error: {
          message: 'Incorrect API key provided',
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      },
    });
    const denied = await model()
      .generate(request())
      .catch((e: unknown) => e);
    expect((denied as ModelError).retryable).toBe(false);
    expect((denied as ModelError).message).toBe(
      '[openai] 401 invalid_api_key Incorrect API key provided',
    );
    expect(fake.requests).toHaveLength(4);

    // The arguments stop halfway: the last piece never came (finish_reason "length").
    const cut = fixture('openai-ask.sse')
      .split('\n\n')
      .filter((event) => !event.includes('nth do you travel'))
      .join('\n\n')
      .replace('"finish_reason":"tool_calls"', '"finish_reason":"length"');
    fake.queue.push({ sse: cut });
    const broken = await model()
      .generate(request())
      .catch((e: unknown) => e);
    expect((broken as ModelError).retryable).toBe(false);
    expect((broken as ModelError).message).toMatch(
      /^\[openai\] the model's response cannot be used \(the response hit its length limit\)/,
    );
  });
});
