import type { ModelMessage } from 'ai';
import fc from 'fast-check';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { promptSeenByModel } from '../test/ai-model.js';
import { transcript } from '../test/arbitraries.js';
import { equivalent } from '../test/normalise.js';
import {
  type AiSdkModelMessage,
  type AiSdkModelMessageParam,
  fromModelMessages,
  type Message,
  toModelMessages,
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

describe('types match the ai package', () => {
  it('what toModelMessages writes is a ModelMessage[], and ai arrays can be read', () => {
    expectTypeOf<AiSdkModelMessage[]>().toExtend<ModelMessage[]>();
    expectTypeOf<ModelMessage[]>().toExtend<AiSdkModelMessageParam[]>();
    const written: ModelMessage[] = toModelMessages([{ role: 'user', content: [] }]);
    expect(fromModelMessages(written).messages).toEqual([{ role: 'user', content: [] }]);
  });
});

describe('toModelMessages', () => {
  const conversation: Message[] = [
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
        { type: 'text', text: 'Zooming.' },
        { type: 'tool_use', id: 'a', name: 'zoom', input: { factor: 2 } },
        { type: 'tool_use', id: 'b', name: 'crop', input: [1, 2] },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'a', content: 'ok' },
        {
          type: 'tool_result',
          tool_use_id: 'b',
          content: [
            { type: 'text', text: 'cropped' },
            { type: 'image', source: png },
          ],
          is_error: true,
        },
        { type: 'text', text: 'and?' },
      ],
    },
  ];

  it('writes every block as the AI SDK part @ai-sdk/anthropic reads', () => {
    expect(toModelMessages(conversation, { system: 'Be brief.' })).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image', image: 'iVBORw0KGgo=', mediaType: 'image/png' },
          { type: 'image', image: 'https://x.test/a.png' },
        ],
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'reasoning',
            text: 'hmm',
            providerOptions: { anthropic: { signature: 'sig==' } },
          },
          {
            type: 'reasoning',
            text: '',
            providerOptions: { anthropic: { redactedData: 'opaque==' } },
          },
          { type: 'text', text: 'Zooming.' },
          { type: 'tool-call', toolCallId: 'a', toolName: 'zoom', input: { factor: 2 } },
          { type: 'tool-call', toolCallId: 'b', toolName: 'crop', input: [1, 2] },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'a',
            toolName: 'zoom',
            output: { type: 'text', value: 'ok' },
          },
          {
            type: 'tool-result',
            toolCallId: 'b',
            toolName: 'crop',
            output: {
              type: 'content',
              value: [
                { type: 'text', text: 'cropped' },
                { type: 'image-data', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
              ],
            },
            providerOptions: { xWire: { isError: true } },
          },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'and?' }] },
    ]);
  });

  it('writes an error with string content as error-text', () => {
    const out = toModelMessages([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'a', content: 'failed', is_error: true }],
      },
    ]);
    expect(out[1]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'a',
          toolName: 'f',
          output: { type: 'error-text', value: 'failed' },
        },
      ],
    });
  });

  it('survives everything, thinking byte for byte', () => {
    expect(fromModelMessages(toModelMessages(conversation, { system: 's' }))).toEqual({
      system: 's',
      messages: conversation,
    });
  });

  it('refuses a tool_result whose tool_use is not in the transcript (no tool name)', () => {
    const error = wireError(() =>
      toModelMessages([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x' }] }]),
    );
    expect(error.code).toBe('invalid_transcript');
    expect(error.path).toEqual([0, 'content', 0]);
  });

  it('refuses an image URL that is not absolute (the AI SDK would read it as base64)', () => {
    const error = wireError(() =>
      toModelMessages([
        { role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'a.png' } }] },
      ]),
    );
    expect(error.code).toBe('unsupported');
    expect(error.path).toEqual([0, 'content', 0, 'source', 'url']);
  });

  it('refuses a relative image URL inside a tool result too (the AI SDK would throw a TypeError)', () => {
    const error = wireError(() =>
      toModelMessages([
        { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'a',
              content: [{ type: 'image', source: { type: 'url', url: '/a.png' } }],
            },
          ],
        },
      ]),
    );
    expect(error.code).toBe('unsupported');
    expect(error.path).toEqual([1, 'content', 0, 'content', 0, 'source', 'url']);
  });

  it('writes a base64 data: URL inline, as the AI SDK itself sends one; it comes back as base64', () => {
    const url = 'data:image/png;base64,iVBORw0KGgo=';
    const image = { type: 'image', source: { type: 'url', url } } as const;
    const messages: Message[] = [
      { role: 'user', content: [image] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: [image] }] },
    ];
    const out = toModelMessages(messages);
    expect(out[0]).toEqual({
      role: 'user',
      content: [{ type: 'image', image: 'iVBORw0KGgo=', mediaType: 'image/png' }],
    });
    expect(out[2]?.content[0]).toMatchObject({
      output: {
        type: 'content',
        value: [{ type: 'image-data', data: 'iVBORw0KGgo=', mediaType: 'image/png' }],
      },
    });
    const back = { type: 'image', source: png } as const;
    expect(fromModelMessages(out).messages).toEqual([
      { role: 'user', content: [back] },
      messages[1],
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: [back] }] },
    ]);
  });
});

describe('fromModelMessages', () => {
  it('reads json, error-json and execution-denied results as @ai-sdk/anthropic sends them', () => {
    const { messages } = fromModelMessages([
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'a', toolName: 'f', input: {} },
          { type: 'tool-call', toolCallId: 'b', toolName: 'f', input: {} },
          { type: 'tool-call', toolCallId: 'c', toolName: 'f', input: {} },
          { type: 'tool-call', toolCallId: 'd', toolName: 'f', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'a',
            toolName: 'f',
            output: { type: 'json', value: { n: 1 } },
          },
          {
            type: 'tool-result',
            toolCallId: 'b',
            toolName: 'f',
            output: { type: 'error-json', value: ['e'] },
          },
          {
            type: 'tool-result',
            toolCallId: 'c',
            toolName: 'f',
            output: { type: 'execution-denied' },
          },
          {
            type: 'tool-result',
            toolCallId: 'd',
            toolName: 'f',
            output: { type: 'execution-denied', reason: 'no' },
          },
        ],
      },
    ]);
    expect(messages[1]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'a', content: '{"n":1}' },
      { type: 'tool_result', tool_use_id: 'b', content: '["e"]', is_error: true },
      { type: 'tool_result', tool_use_id: 'c', content: 'Tool execution denied.' },
      { type: 'tool_result', tool_use_id: 'd', content: 'no' },
    ]);
  });

  it('reads string content, system messages, binary and data-URL images, file images', () => {
    const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const result = fromModelMessages([
      { role: 'system', content: 'one' },
      {
        role: 'user',
        content: [
          { type: 'image', image: bytes },
          { type: 'image', image: bytes.buffer, mediaType: 'image/png' },
          { type: 'image', image: new URL('https://x.test/i.gif') },
          { type: 'image', image: 'data:image/webp;base64,UklGRg==' },
          { type: 'file', data: '/9j/AA==', mediaType: 'image/jpeg' },
        ],
      },
      { role: 'system', content: 'two' },
      { role: 'assistant', content: 'plain' },
    ]);
    expect(result).toEqual({
      system: 'one\n\ntwo',
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'image',
              source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
            },
            {
              type: 'image',
              source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
            },
            { type: 'image', source: { type: 'url', url: 'https://x.test/i.gif' } },
            {
              type: 'image',
              source: { type: 'base64', media_type: 'image/webp', data: 'UklGRg==' },
            },
            {
              type: 'image',
              source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/AA==' },
            },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'plain' }] },
      ],
    });
  });

  it('keeps a declared media type among the four, reads image/* or none from the bytes', () => {
    const png = 'iVBORw0KGgoAAAANSUhEUg==';
    const { messages } = fromModelMessages([
      {
        role: 'user',
        content: [
          { type: 'image', image: png, mediaType: 'image/gif' },
          { type: 'image', image: png, mediaType: 'image/*' },
          { type: 'file', data: png, mediaType: 'image/*' },
        ],
      },
    ]);
    expect(messages[0]?.content.map((b) => b.type === 'image' && b.source)).toEqual([
      { type: 'base64', media_type: 'image/gif', data: png },
      { type: 'base64', media_type: 'image/png', data: png },
      { type: 'base64', media_type: 'image/png', data: png },
    ]);
  });

  it('drops other providerOptions (cache control, ...) and keeps the part', () => {
    const cache = { anthropic: { cacheControl: { type: 'ephemeral' } } };
    const { messages } = fromModelMessages([
      { role: 'user', content: [{ type: 'text', text: 'hi', providerOptions: cache }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'yo', providerOptions: cache },
          { type: 'tool-call', toolCallId: 'a', toolName: 'f', input: {}, providerOptions: cache },
        ],
      },
    ]);
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'yo' },
          { type: 'tool_use', id: 'a', name: 'f', input: {} },
        ],
      },
    ]);
  });

  it('drops reasoning without an Anthropic signature, and tool approval parts', () => {
    const { messages } = fromModelMessages([
      {
        role: 'assistant',
        content: [
          {
            type: 'reasoning',
            text: 'openai summary',
            providerOptions: { openai: { itemId: 'rs_1' } },
          },
          { type: 'tool-call', toolCallId: 'a', toolName: 'f', input: { q: 1 } },
          { type: 'tool-approval-request', approvalId: 'ap', toolCallId: 'a' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-approval-response', approvalId: 'ap', approved: true },
          {
            type: 'tool-result',
            toolCallId: 'a',
            toolName: 'f',
            output: { type: 'text', value: 'r' },
          },
        ],
      },
    ]);
    expect(messages).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: { q: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'r' }] },
    ]);
  });

  it.each<[string, unknown, Array<string | number>]>([
    [
      'a pdf file',
      [{ role: 'user', content: [{ type: 'file', data: 'JVBER', mediaType: 'application/pdf' }] }],
      [0, 'content', 0, 'mediaType'],
    ],
    [
      'an image of unknown type',
      [{ role: 'user', content: [{ type: 'image', image: 'AAAA' }] }],
      [0, 'content', 0, 'mediaType'],
    ],
    ...['image/svg+xml', 'image/png;name=a.png', 'IMAGE/PNG', 'image/x-icon'].map(
      (mediaType): [string, unknown, Array<string | number>] => [
        `an image of type ${mediaType}, even with PNG bytes (never silently retyped)`,
        [
          {
            role: 'user',
            content: [{ type: 'image', image: 'iVBORw0KGgoAAAANSUhEUg==', mediaType }],
          },
        ],
        [0, 'content', 0, 'mediaType'],
      ],
    ),
    [
      'an svg inside a tool result',
      [
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'f', input: {} }],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'a',
              toolName: 'f',
              output: {
                type: 'content',
                value: [{ type: 'image-data', data: 'PHN2Zz4=', mediaType: 'image/svg+xml' }],
              },
            },
          ],
        },
      ],
      [1, 'content', 0, 'output', 'value', 0, 'mediaType'],
    ],
    [
      'a provider-executed tool call',
      [
        {
          role: 'assistant',
          content: [
            {
              type: 'tool-call',
              toolCallId: 'a',
              toolName: 'web_search',
              input: {},
              providerExecuted: true,
            },
          ],
        },
      ],
      [0, 'content', 0, 'providerExecuted'],
    ],
    [
      'a file-id tool result part',
      [
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'f', input: {} }],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'a',
              toolName: 'f',
              output: { type: 'content', value: [{ type: 'file-id', fileId: 'x' }] },
            },
          ],
        },
      ],
      [1, 'content', 0, 'output', 'value', 0, 'type'],
    ],
    [
      'a pdf inside a tool result',
      [
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'f', input: {} }],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'a',
              toolName: 'f',
              output: {
                type: 'content',
                value: [{ type: 'file-data', data: 'x', mediaType: 'application/pdf' }],
              },
            },
          ],
        },
      ],
      [1, 'content', 0, 'output', 'value', 0, 'mediaType'],
    ],
  ])('refuses %s as unsupported', (_name, input, path) => {
    const error = wireError(() => fromModelMessages(input as AiSdkModelMessageParam[]));
    expect(error.code).toBe('unsupported');
    expect(error.path).toEqual(path);
  });

  it.each<[string, unknown, Array<string | number>]>([
    ['not an array', 'x', []],
    ['an unknown role', [{ role: 'developer', content: 'x' }], [0, 'role']],
    [
      'system content that is not a string',
      [{ role: 'system', content: [{ type: 'text', text: 'x' }] }],
      [0, 'content'],
    ],
    [
      'an unknown assistant part',
      [{ role: 'assistant', content: [{ type: 'source' }] }],
      [0, 'content', 0, 'type'],
    ],
    [
      'a tool input that is not JSON',
      [
        {
          role: 'assistant',
          content: [
            { type: 'tool-call', toolCallId: 'a', toolName: 'f', input: { d: new Date(0) } },
          ],
        },
      ],
      [0, 'content', 0, 'input', 'd'],
    ],
    [
      'a tool message with a text part',
      [{ role: 'tool', content: [{ type: 'text', text: 'x' }] }],
      [0, 'content', 0, 'type'],
    ],
    [
      'an unknown output type',
      [
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'f', input: {} }],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: 'a', toolName: 'f', output: { type: 'weird' } },
          ],
        },
      ],
      [1, 'content', 0, 'output', 'type'],
    ],
    [
      'image data of the wrong type',
      [{ role: 'user', content: [{ type: 'image', image: 42 }] }],
      [0, 'content', 0, 'image'],
    ],
  ])('refuses %s as invalid', (_name, input, path) => {
    const error = wireError(() => fromModelMessages(input as AiSdkModelMessageParam[]));
    expect(error.code).toBe('invalid');
    expect(error.path).toEqual(path);
  });

  it('refuses a tool result that answers no earlier call', () => {
    const error = wireError(() =>
      fromModelMessages([
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'x',
              toolName: 'f',
              output: { type: 'text', value: '' },
            },
          ],
        },
      ]),
    );
    expect(error.code).toBe('invalid_transcript');
  });
});

describe('round trip (property)', () => {
  it('from(to(x)) gives back x: the AI SDK expresses everything', () => {
    fc.assert(
      fc.property(
        transcript({ toolResultImages: true }),
        fc.option(fc.string(), { nil: undefined }),
        (messages, system) => {
          const back = fromModelMessages(
            toModelMessages(messages, system === undefined ? {} : { system }),
          );
          expect(back.messages).toEqual(equivalent(messages));
          if (system === undefined) expect(back).not.toHaveProperty('system');
          else expect(back.system).toBe(system);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('what comes back survives JSON (a saved ModelMessage[] reads the same)', () => {
    fc.assert(
      fc.property(transcript({ toolResultImages: true }), (messages) => {
        const saved = JSON.parse(
          JSON.stringify(toModelMessages(messages)),
        ) as AiSdkModelMessageParam[];
        // JSON itself turns -0 into 0; nothing else may change.
        expect(fromModelMessages(saved).messages).toEqual(
          JSON.parse(JSON.stringify(equivalent(messages))),
        );
      }),
    );
  });
});

describe('what the ai package itself does with what toModelMessages writes', () => {
  it("drops empty text parts (a user's always, an assistant's without providerOptions)", async () => {
    const prompt = await promptSeenByModel(
      toModelMessages([
        {
          role: 'user',
          content: [
            { type: 'text', text: '' },
            { type: 'text', text: 'hi' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: '' },
            { type: 'text', text: 'yo' },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'and?' }] },
      ]),
    );
    expect(prompt.map((m) => m.content)).toEqual([
      [{ type: 'text', text: 'hi' }],
      [{ type: 'text', text: 'yo' }],
      [{ type: 'text', text: 'and?' }],
    ]);
  });

  it('passes thinking and redacted thinking to the provider byte for byte, in place', async () => {
    const thinking = { type: 'thinking', thinking: ' ünï\u0000\n ', signature: 'sig==' } as const;
    const prompt = await promptSeenByModel(
      toModelMessages([
        { role: 'user', content: [{ type: 'text', text: 'q' }] },
        {
          role: 'assistant',
          content: [
            thinking,
            { type: 'text', text: 'a' },
            { type: 'redacted_thinking', data: 'r' },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'q2' }] },
      ]),
    );
    expect(prompt[1]).toMatchObject({
      role: 'assistant',
      content: [
        {
          type: 'reasoning',
          text: thinking.thinking,
          providerOptions: { anthropic: { signature: 'sig==' } },
        },
        { type: 'text', text: 'a' },
        { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'r' } } },
      ],
    });
  });

  it('sends an image with the media type it detects from the bytes, not the declared one', async () => {
    const prompt = await promptSeenByModel(
      toModelMessages([
        {
          role: 'user',
          content: [{ type: 'image', source: { ...png, media_type: 'image/jpeg' } }],
        },
      ]),
    );
    expect(prompt[0]?.content[0]).toMatchObject({ type: 'file', mediaType: 'image/png' });
  });
});
