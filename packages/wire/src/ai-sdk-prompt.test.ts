import { generateText, type ModelMessage, streamText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { type AiSdkPromptMessage, type Message, toModelMessages, toModelPrompt } from './index.js';

const transcript: Message[] = [
  { role: 'user', content: [{ type: 'text', text: 'Where to?' }] },
  {
    role: 'assistant',
    content: [{ type: 'tool_use', id: 'call_1', name: 'ask_user', input: { q: 'City?' } }],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'Lisbon' }] },
];

function model() {
  return new MockLanguageModelV3({
    doGenerate: {
      content: [{ type: 'text', text: 'Lisbon it is.' }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      },
      warnings: [],
    },
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('toModelPrompt', () => {
  it('returns the system prompt as its own option, the messages as toModelMessages writes them', () => {
    expectTypeOf<AiSdkPromptMessage[]>().toExtend<ModelMessage[]>();
    expect(toModelPrompt(transcript, { system: 'Be brief.' })).toEqual({
      system: 'Be brief.',
      messages: toModelMessages(transcript),
    });
    expect(toModelPrompt(transcript)).toEqual({ messages: toModelMessages(transcript) });
  });

  it('generateText takes it with no warning, and sends the system prompt first', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const mock = model();
    const result = await generateText({
      model: mock,
      ...toModelPrompt(transcript, { system: 'Be brief.' }),
    });
    expect(result.text).toBe('Lisbon it is.');
    expect(warn).not.toHaveBeenCalled();
    expect(mock.doGenerateCalls[0]?.prompt[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(mock.doGenerateCalls[0]?.prompt).toHaveLength(4);

    // What the issue saw: a system message inside `messages` makes the AI SDK warn.
    await generateText({ model: model(), messages: toModelMessages(transcript, { system: 'x' }) });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('System messages in the prompt'));
  });

  it('streamText takes it with no warning', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const mock = new MockLanguageModelV3({
      doStream: {
        stream: new ReadableStream({
          start(controller) {
            controller.enqueue({ type: 'text-start', id: 't' });
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'Lisbon.' });
            controller.enqueue({ type: 'text-end', id: 't' });
            controller.enqueue({
              type: 'finish',
              finishReason: { unified: 'stop', raw: undefined },
              usage: {
                inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
                outputTokens: { total: 1, text: 1, reasoning: 0 },
              },
            });
            controller.close();
          },
        }),
      },
    });
    const result = streamText({ model: mock, ...toModelPrompt(transcript, { system: 'S' }) });
    expect(await result.text).toBe('Lisbon.');
    expect(warn).not.toHaveBeenCalled();
  });
});
