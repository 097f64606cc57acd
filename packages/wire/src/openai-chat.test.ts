import fc from 'fast-check';
import type {
  ChatCompletionMessage,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { transcript } from '../test/arbitraries.js';
import { equivalent, openAIChatVisible } from '../test/normalise.js';
import {
  fromOpenAIChat,
  type Message,
  type OpenAIChatMessage,
  type OpenAIChatMessageParam,
  parseMessages,
  toOpenAIChat,
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

describe('types match the openai package', () => {
  it('what toOpenAIChat writes is a ChatCompletionMessageParam[], and openai arrays can be read', () => {
    expectTypeOf<OpenAIChatMessage[]>().toExtend<ChatCompletionMessageParam[]>();
    expectTypeOf<ChatCompletionMessageParam[]>().toExtend<OpenAIChatMessageParam[]>();
    // A response message (choices[0].message) can be read as it is, too.
    expectTypeOf<ChatCompletionMessage>().toExtend<OpenAIChatMessageParam>();
    const written: ChatCompletionMessageParam[] = toOpenAIChat([{ role: 'user', content: [] }]);
    expect(fromOpenAIChat(written).messages).toEqual([{ role: 'user', content: [] }]);
  });
});

describe('toOpenAIChat', () => {
  it('writes the system prompt first, user text and images, assistant text and tool calls', () => {
    const messages: unknown = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is on these?' },
          { type: 'image', source: png },
          { type: 'image', source: { type: 'url', url: 'https://x.test/b.jpg' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          {
            type: 'tool_use',
            id: 'call_1',
            name: 'zoom',
            input: { factor: 2, region: [0, 0, 10, 10] },
          },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'a cat' }] },
      { role: 'assistant', content: 'A cat.' },
    ];
    const parsed = parseMessages(messages);
    expect(toOpenAIChat(parsed, { system: 'Be brief.' })).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is on these?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://x.test/b.jpg' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'zoom', arguments: '{"factor":2,"region":[0,0,10,10]}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
      { role: 'assistant', content: 'A cat.' },
    ]);
  });

  it('writes no system message without options.system, and a one-text user message as a string', () => {
    expect(toOpenAIChat([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }])).toEqual([
      { role: 'user', content: 'hi' },
    ]);
  });

  it('puts each tool result in a tool message before the rest of its user message', () => {
    const messages: Message[] = [
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'a', name: 'f', input: {} },
          { type: 'tool_use', id: 'b', name: 'f', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'also this' },
          {
            type: 'tool_result',
            tool_use_id: 'a',
            content: [
              { type: 'text', text: 'one' },
              { type: 'text', text: 'two' },
            ],
          },
          { type: 'tool_result', tool_use_id: 'b' },
        ],
      },
    ];
    expect(toOpenAIChat(messages).slice(1)).toEqual([
      {
        role: 'tool',
        tool_call_id: 'a',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
      { role: 'tool', tool_call_id: 'b', content: '' },
      { role: 'user', content: 'also this' },
    ]);
  });

  it('writes content null for an assistant message without text, and several texts as parts', () => {
    const out = toOpenAIChat([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: null }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'x' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
    ]);
    expect(out[0]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: 'null' } }],
    });
    expect(out[2]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ],
    });
  });

  it('drops exactly thinking, redacted_thinking and is_error, nothing else', () => {
    const messages: Message[] = [
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'private', signature: 'sig' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'text', text: 'Trying.' },
          { type: 'tool_use', id: 'a', name: 'f', input: { x: 1 } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'a', content: 'boom', is_error: true }],
      },
    ];
    const written = toOpenAIChat(messages);
    const serialised = JSON.stringify(written);
    for (const dropped of ['private', 'sig', 'opaque', 'is_error', 'thinking'])
      expect(serialised).not.toContain(dropped);
    expect(fromOpenAIChat(written).messages).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Trying.' },
          { type: 'tool_use', id: 'a', name: 'f', input: { x: 1 } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'boom' }] },
    ]);
  });

  it('moves text written after a tool call before the calls', () => {
    const written = toOpenAIChat([
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'a', name: 'f', input: {} },
          { type: 'text', text: 'after' },
        ],
      },
    ]);
    expect(fromOpenAIChat(written).messages[0]?.content).toEqual([
      { type: 'text', text: 'after' },
      { type: 'tool_use', id: 'a', name: 'f', input: {} },
    ]);
  });

  it('writes input as JSON text, so a -0 in it comes back as 0 (JSON has no negative zero)', () => {
    const written = toOpenAIChat([
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'a', name: 'f', input: { x: -0, y: [1.5] } }],
      },
    ]);
    const back = fromOpenAIChat(written).messages[0]?.content[0];
    expect(back).toEqual({ type: 'tool_use', id: 'a', name: 'f', input: { x: 0, y: [1.5] } });
    expect(back?.type === 'tool_use' && Object.is((back.input as { x: number }).x, 0)).toBe(true);
  });

  it('refuses an image inside a tool result (unsupported), naming its path', () => {
    const error = wireError(() =>
      toOpenAIChat([
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'a', name: 'screenshot', input: {} }],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'here' },
            {
              type: 'tool_result',
              tool_use_id: 'a',
              content: [
                { type: 'text', text: 'shot:' },
                { type: 'image', source: png },
              ],
            },
          ],
        },
      ]),
    );
    expect(error.code).toBe('unsupported');
    expect(error.path).toEqual([1, 'content', 1, 'content', 1]);
    expect(error.message).toContain('messages[1].content[1].content[1]:');
  });
});

describe('fromOpenAIChat', () => {
  it('collects system and developer messages into system', () => {
    const result = fromOpenAIChat([
      { role: 'system', content: 'one' },
      { role: 'user', content: 'hi' },
      {
        role: 'developer',
        content: [
          { type: 'text', text: 'two' },
          { type: 'text', text: '!' },
        ],
      },
    ]);
    expect(result).toEqual({
      system: 'one\n\ntwo!',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(fromOpenAIChat([{ role: 'user', content: 'x' }])).not.toHaveProperty('system');
  });

  it('merges consecutive tool messages and the user message after them', () => {
    const { messages } = fromOpenAIChat([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
          { id: 'b', type: 'function', function: { name: 'g', arguments: '[1]' } },
        ],
      },
      { role: 'tool', tool_call_id: 'a', content: 'A' },
      { role: 'tool', tool_call_id: 'b', content: [{ type: 'text', text: 'B' }] },
      { role: 'user', content: 'and now?' },
      { role: 'user', content: 'hello?' },
    ]);
    expect(messages).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'a', name: 'f', input: {} },
          { type: 'tool_use', id: 'b', name: 'g', input: [1] },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: 'A' },
          { type: 'tool_result', tool_use_id: 'b', content: [{ type: 'text', text: 'B' }] },
          { type: 'text', text: 'and now?' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'hello?' }] },
    ]);
  });

  it('reads data URLs as base64 images and keeps other URLs; drops detail and name', () => {
    const { messages } = fromOpenAIChat([
      {
        role: 'user',
        name: 'ann',
        content: [
          {
            type: 'image_url',
            image_url: { url: 'data:image/jpeg;base64,/9j/AA==', detail: 'high' },
          },
          { type: 'image_url', image_url: { url: 'https://x.test/a.png', detail: 'low' } },
        ],
      },
    ]);
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/AA==' } },
          { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } },
        ],
      },
    ]);
  });

  it('keeps a data URL of another image type (or with parameters) as a url image', () => {
    const urls = ['data:image/svg+xml;base64,PHN2Zz4=', 'data:image/png;name=a.png;base64,'];
    const { messages } = fromOpenAIChat([
      { role: 'user', content: urls.map((url) => ({ type: 'image_url', image_url: { url } })) },
    ]);
    expect(messages[0]?.content).toEqual(
      urls.map((url) => ({ type: 'image', source: { type: 'url', url } })),
    );
    expect(fromOpenAIChat(toOpenAIChat(messages)).messages).toEqual(messages);
  });

  it('reads a response message as it is: its annotations (url citations) are dropped, its text kept', () => {
    const response: ChatCompletionMessage = {
      role: 'assistant',
      content: 'Paris is the capital [1].',
      refusal: null,
      annotations: [
        {
          type: 'url_citation',
          url_citation: { url: 'https://x.test/p', title: 'P', start_index: 22, end_index: 25 },
        },
      ],
    };
    expect(fromOpenAIChat([response]).messages).toEqual([
      { role: 'assistant', content: [{ type: 'text', text: 'Paris is the capital [1].' }] },
    ]);
  });

  it('keeps a refusal as text', () => {
    expect(
      fromOpenAIChat([
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] },
        { role: 'assistant', content: null, refusal: 'never' },
      ]).messages,
    ).toEqual([
      { role: 'assistant', content: [{ type: 'text', text: 'no' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'never' }] },
    ]);
  });

  it('refuses arguments that are not JSON', () => {
    const error = wireError(() =>
      fromOpenAIChat([
        {
          role: 'assistant',
          tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":' } }],
        },
      ]),
    );
    expect(error.code).toBe('invalid');
    expect(error.path).toEqual([0, 'tool_calls', 0, 'function', 'arguments']);
    expect(error.message).toContain('messages[0].tool_calls[0].function.arguments:');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it.each<[string, unknown, Array<string | number>]>([
    ['role function', [{ role: 'function', name: 'f', content: 'x' }], [0, 'role']],
    [
      'an audio part',
      [
        {
          role: 'user',
          content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }],
        },
      ],
      [0, 'content', 0, 'type'],
    ],
    [
      'a file part',
      [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }],
      [0, 'content', 0, 'type'],
    ],
    [
      'a custom tool call',
      [
        {
          role: 'assistant',
          tool_calls: [{ id: 'a', type: 'custom', custom: { name: 'f', input: 'x' } }],
        },
      ],
      [0, 'tool_calls', 0, 'type'],
    ],
    [
      'a legacy function_call',
      [{ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }],
      [0, 'function_call'],
    ],
    ['assistant audio', [{ role: 'assistant', audio: { id: 'x' } }], [0, 'audio']],
  ])('refuses %s as unsupported', (_name, input, path) => {
    const error = wireError(() => fromOpenAIChat(input as OpenAIChatMessageParam[]));
    expect(error.code).toBe('unsupported');
    expect(error.path).toEqual(path);
  });

  it.each<[string, unknown, Array<string | number>]>([
    ['not an array', { role: 'user' }, []],
    ['null', null, []],
    ['a message that is a number', [1], [0]],
    ['an unknown role', [{ role: 'model', content: 'x' }], [0, 'role']],
    ['user content of the wrong type', [{ role: 'user', content: 5 }], [0, 'content']],
    [
      'an unknown user part',
      [{ role: 'user', content: [{ type: 'video' }] }],
      [0, 'content', 0, 'type'],
    ],
    [
      'an image part without url',
      [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }],
      [0, 'content', 0, 'image_url', 'url'],
    ],
    ['a tool message without id', [{ role: 'tool', content: 'x' }], [0, 'tool_call_id']],
    [
      'a tool call without name',
      [
        {
          role: 'assistant',
          tool_calls: [{ id: 'a', type: 'function', function: { arguments: '{}' } }],
        },
      ],
      [0, 'tool_calls', 0, 'function', 'name'],
    ],
    [
      'a tool call with an empty id',
      [
        {
          role: 'assistant',
          tool_calls: [{ id: '', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
      ],
      [0, 'tool_calls', 0, 'id'],
    ],
    [
      'system content that is not text',
      [{ role: 'system', content: [{ type: 'image_url' }] }],
      [0, 'content', 0, 'type'],
    ],
  ])('refuses %s as invalid', (_name, input, path) => {
    const error = wireError(() => fromOpenAIChat(input as OpenAIChatMessageParam[]));
    expect(error.code).toBe('invalid');
    expect(error.path).toEqual(path);
  });

  it('refuses a tool message that answers no earlier call', () => {
    const error = wireError(() =>
      fromOpenAIChat([{ role: 'tool', tool_call_id: 'x', content: 'r' }]),
    );
    expect(error.code).toBe('invalid_transcript');
    expect(error.message).toContain('converted transcript');
  });

  it('a throwing getter is a WireError', () => {
    const hostile = {
      role: 'user',
      get content(): string {
        throw new Error('boom');
      },
    };
    expect(wireError(() => fromOpenAIChat([hostile as OpenAIChatMessageParam])).code).toBe(
      'invalid',
    );
  });
});

describe('round trip (property)', () => {
  it('from(to(x)) gives back x, less what OpenAI chat cannot carry', () => {
    fc.assert(
      fc.property(
        transcript({ toolResultImages: false }),
        fc.option(fc.string(), { nil: undefined }),
        (messages, system) => {
          const back = fromOpenAIChat(
            toOpenAIChat(messages, system === undefined ? {} : { system }),
          );
          expect(back.messages).toEqual(openAIChatVisible(messages));
          if (system === undefined) expect(back).not.toHaveProperty('system');
          else expect(back.system).toBe(system);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a transcript that keeps to what OpenAI chat expresses comes back exactly', () => {
    fc.assert(
      fc.property(transcript({ toolResultImages: false }), (messages) => {
        const visible = openAIChatVisible(messages);
        expect(fromOpenAIChat(toOpenAIChat(visible)).messages).toEqual(visible);
      }),
    );
  });

  it('an image in any tool result is refused, never dropped', () => {
    fc.assert(
      fc.property(transcript({ toolResultImages: true }), (messages) => {
        const hasImage = equivalent(messages).some((m) =>
          m.content.some(
            (b) =>
              b.type === 'tool_result' &&
              Array.isArray(b.content) &&
              b.content.some((c) => c.type === 'image'),
          ),
        );
        if (hasImage) expect(wireError(() => toOpenAIChat(messages)).code).toBe('unsupported');
        else
          expect(fromOpenAIChat(toOpenAIChat(messages)).messages).toEqual(
            openAIChatVisible(messages),
          );
      }),
    );
  });
});
