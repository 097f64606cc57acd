import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, Message as SdkMessage } from '@anthropic-ai/sdk/resources/messages';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AnthropicMessageParam,
  type AnthropicMessageParamLike,
  type AnthropicResponseLike,
  type AssistantMessage,
  fromAnthropicMessage,
  fromAnthropicMessages,
  type Message,
  toAnthropicMessages,
  WireError,
} from './index.js';

function wireError(fn: () => unknown): WireError {
  try {
    fn();
  } catch (error) {
    if (!WireError.is(error)) throw error;
    return error;
  }
  throw new Error('expected a WireError, nothing was thrown');
}

const png = { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } as const;

const transcript: Message[] = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Look' },
      { type: 'image', source: png },
      { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
    ],
  },
  {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'hmm', signature: 'sig==' },
      { type: 'redacted_thinking', data: 'opaque==' },
      { type: 'tool_use', id: 'toolu_1', name: 'zoom', input: { factor: 2 } },
    ],
  },
  {
    role: 'user',
    content: [
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [
          { type: 'text', text: 'zoomed' },
          { type: 'image', source: png },
        ],
        is_error: true,
      },
    ],
  },
];

// What the Messages API answers; the SDK client below reads it as its `Message` type.
const reply = {
  id: 'msg_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-x',
  content: [
    { type: 'thinking', thinking: 'The image is \u4eac\u90fd.', signature: 'EqQB==' },
    { type: 'text', text: 'Kyoto.', citations: null },
    {
      type: 'tool_use',
      id: 'toolu_2',
      name: 'ask_user',
      input: { question: 'Go?' },
      caller: { type: 'direct' },
    },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 5 },
};

let url = '';
const bodies: unknown[] = [];
const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (chunk: Buffer) => {
    raw += chunk.toString('utf8');
  });
  req.on('end', () => {
    bodies.push(JSON.parse(raw));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply));
  });
});
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('types match @anthropic-ai/sdk', () => {
  it('what toAnthropicMessages writes is a MessageParam[]; SDK messages can be read', () => {
    expectTypeOf<AnthropicMessageParam[]>().toExtend<MessageParam[]>();
    // A transcript goes to the SDK as it is: our blocks are the Messages API's own shape.
    expectTypeOf<Message[]>().toExtend<MessageParam[]>();
    expectTypeOf<SdkMessage>().toExtend<AnthropicResponseLike>();
    expectTypeOf<MessageParam[]>().toExtend<AnthropicMessageParamLike[]>();
  });

  it('round-trips through the SDK client without a cast', async () => {
    const client = new Anthropic({ apiKey: 'test-key', baseURL: url, maxRetries: 0 });
    const response = await client.messages.create({
      model: 'claude-x',
      max_tokens: 1024,
      system: 'Be brief.',
      messages: toAnthropicMessages(transcript),
    });
    const back: AssistantMessage = fromAnthropicMessage(response);
    expect(bodies.at(-1)).toMatchObject({ system: 'Be brief.', messages: transcript });
    expect(back).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The image is \u4eac\u90fd.', signature: 'EqQB==' },
        { type: 'text', text: 'Kyoto.' },
        { type: 'tool_use', id: 'toolu_2', name: 'ask_user', input: { question: 'Go?' } },
      ],
    });
    // The params the SDK takes come back as the transcript.
    const params: MessageParam[] = toAnthropicMessages([...transcript, back]);
    expect(fromAnthropicMessages(params)).toEqual({ messages: [...transcript, back] });
  });
});

describe('toAnthropicMessages', () => {
  it('writes our blocks as they are, sharing no image source', () => {
    const written = toAnthropicMessages(transcript);
    expect(written).toEqual(transcript);
    const first = written[0]?.content[1];
    expect(first?.type === 'image' && first.source).not.toBe(png);
  });

  it('refuses a base64 image of another media type as invalid input, naming where it is', () => {
    const svg = { type: 'base64', media_type: 'image/svg+xml', data: 'PHN2Zz4=' } as const;
    const inTool = wireError(() =>
      toAnthropicMessages([
        transcript[0] as Message,
        transcript[1] as Message,
        // Only untyped input can hold one: the schema takes the four media types alone.
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [{ type: 'image', source: svg }],
            },
          ],
        } as unknown as Message,
      ]),
    );
    expect(inTool.code).toBe('invalid');
    expect(inTool.path).toEqual([2, 'content', 0, 'content', 0, 'source', 'media_type']);
    expect(inTool.message).toContain('messages[2].content[0].content[0].source.media_type');
    expect(inTool.message).toContain('image/webp');
  });
});

describe('fromAnthropicMessage', () => {
  it('refuses server tool blocks, which our model cannot carry', () => {
    const error = wireError(() =>
      fromAnthropicMessage({
        role: 'assistant',
        content: [{ type: 'text' }, { type: 'server_tool_use' }],
      }),
    );
    expect(error.code).toBe('unsupported');
    expect(error.path).toEqual(['content', 1, 'type']);
    expect(error.message).toMatch(
      /^\[@x\/wire\] response\.content\[1\]\.type: a "server_tool_use"/,
    );
  });

  it('names the bad field of a malformed block', () => {
    const error = wireError(() =>
      fromAnthropicMessage({ role: 'assistant', content: [{ type: 'text', text: 5 } as never] }),
    );
    expect(error.code).toBe('invalid');
    expect(error.path).toEqual(['content', 0, 'text']);
    expect(error.message).toContain('response.content[0].text: Invalid input');
    expect(wireError(() => fromAnthropicMessage({ role: 'user' } as never)).path).toEqual(['role']);
  });
});

describe('fromAnthropicMessages', () => {
  it('collects system messages, reads string content, drops provider fields', () => {
    expect(
      fromAnthropicMessages([
        { role: 'system', content: 'One.' },
        {
          role: 'user',
          content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } } as never],
        },
        { role: 'system', content: [{ type: 'text', text: 'Two.' } as never] },
        { role: 'assistant', content: 'Hello' },
      ]),
    ).toEqual({
      system: 'One.\n\nTwo.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Hello' }] },
      ],
    });
  });

  it('refuses documents and file sources, and paths count the input messages', () => {
    const document = wireError(() =>
      fromAnthropicMessages([
        { role: 'system', content: 'S' },
        { role: 'user', content: [{ type: 'document' }] },
      ]),
    );
    expect(document.code).toBe('unsupported');
    expect(document.path).toEqual([1, 'content', 0, 'type']);
    const file = wireError(() =>
      fromAnthropicMessages([
        { role: 'user', content: [{ type: 'image', source: { type: 'file' } } as never] },
      ]),
    );
    expect(file.path).toEqual([0, 'content', 0, 'source', 'type']);
    const bad = wireError(() =>
      fromAnthropicMessages([
        { role: 'system', content: 'S' },
        { role: 'user', content: [{ type: 'tool_use', id: 'x', name: 'y', input: {} } as never] },
      ]),
    );
    expect(bad.code).toBe('invalid');
    expect(bad.message).toContain('messages[1].content[0]');
  });

  it('checks the pairing of tool calls', () => {
    const error = wireError(() =>
      fromAnthropicMessages([
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope' } as never] },
      ]),
    );
    expect(error.code).toBe('invalid_transcript');
  });
});
