import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Message,
  parseMessages,
  toAnthropicMessages,
  toModelMessages,
  toOpenAIChat,
  WireError,
} from './index.js';

const converters = { toOpenAIChat, toModelMessages, toAnthropicMessages } as const;
// The converters with a `system` option (the Anthropic SDK takes it in `create`).
const withOptions = { toOpenAIChat, toModelMessages } as const;

/** What a call threw: `undefined` when it returned, else the error (never rethrown). */
function outcome(fn: () => unknown): unknown {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error;
  }
}

const revoked = (() => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
})();
const cyclic: Record<string, unknown> = {};
cyclic.self = cyclic;

describe.each(Object.entries(converters))('%s checks its input as parseMessages does', (_, to) => {
  const write = to as (messages: unknown, options?: unknown) => unknown;

  it.each<[string, string, Array<string | number>, () => unknown]>([
    ['null', 'invalid', [], () => null],
    ['a number', 'invalid', [], () => 42],
    ['an object', 'invalid', [], () => ({})],
    ['a message that is null', 'invalid', [0], () => [null]],
    ["role 'robot'", 'invalid', [0, 'role'], () => [{ role: 'robot', content: [] }]],
    [
      'an unknown block type',
      'invalid',
      [0, 'content', 0, 'type'],
      () => [{ role: 'user', content: [{ type: 'video' }] }],
    ],
    [
      'NaN in a tool input',
      'invalid',
      [0, 'content', 0, 'input', 0],
      () => [
        { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: [NaN] }] },
      ],
    ],
    [
      'a tool_result without tool_use_id',
      'invalid',
      [1, 'content', 0, 'tool_use_id'],
      () => [
        { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', content: 'x' }] },
      ],
    ],
    [
      'a tool_result answering nothing',
      'invalid_transcript',
      [0, 'content', 0],
      () => [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a' }] }],
    ],
    [
      'a cyclic tool input',
      'invalid',
      [0, 'content', 0, 'input', 'self'],
      () => [
        { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: cyclic }] },
      ],
    ],
    ['a revoked proxy', 'invalid', [], () => [revoked]],
    [
      'a base64 image of a media type the model does not hold',
      'invalid',
      [0, 'content', 0, 'source', 'media_type'],
      () => [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/svg+xml', data: '' } },
          ],
        },
      ],
    ],
  ])('refuses %s with a WireError (%s)', (_name, code, path, input) => {
    const error = outcome(() => write(input()));
    expect(WireError.is(error)).toBe(true);
    expect((error as WireError).code).toBe(code);
    if (path.length > 0) expect((error as WireError).path).toEqual(path);
  });

  it("accepts the `content: 'hi'` shorthand and drops unknown fields, as parseMessages does", () => {
    const raw = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'yo', cache_control: {} }] },
    ];
    expect(write(raw)).toEqual(write(parseMessages(raw)));
  });

  it('property: any input either converts exactly like its parsed form, or throws what parseMessages throws', () => {
    const block = fc.oneof(
      fc.record({ type: fc.constant('text'), text: fc.oneof(fc.string(), fc.integer()) }),
      fc.record({
        type: fc.constantFrom('tool_use', 'tool_result', 'image', 'thinking'),
        id: fc.constantFrom('a', '', undefined),
        tool_use_id: fc.constantFrom('a', 'b', undefined),
        name: fc.constant('f'),
        input: fc.oneof(fc.jsonValue(), fc.constant(Number.NaN)),
        source: fc.record({
          type: fc.constantFrom('base64', 'url'),
          media_type: fc.constantFrom('image/png', 'image/svg+xml'),
          data: fc.constant(''),
          url: fc.constantFrom('https://x.test/a.png', 'a.png'),
        }),
      }),
      fc.anything(),
    );
    const message = fc.record({
      role: fc.constantFrom('user', 'assistant', 'robot'),
      content: fc.oneof(fc.string(), fc.array(block, { maxLength: 3 })),
    });
    fc.assert(
      fc.property(fc.oneof(fc.array(message, { maxLength: 4 }), fc.anything()), (input) => {
        const parse = outcome(() => parseMessages(input));
        const written = outcome(() => write(input));
        if (written !== undefined) expect(WireError.is(written)).toBe(true);
        if (parse === undefined) {
          // Valid input: either converted as its parsed form, or refused as unsupported.
          if (written === undefined) expect(write(input)).toEqual(write(parseMessages(input)));
          else expect((written as WireError).code).toBe('unsupported');
        } else {
          expect(written).toMatchObject({
            code: (parse as WireError).code,
            path: (parse as WireError).path,
          });
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe.each(Object.entries(withOptions))('%s checks its options', (_, to) => {
  it('refuses options that are not an object, and a system prompt that is not a string', () => {
    const write = to as (messages: unknown, options?: unknown) => unknown;
    for (const options of [null, 'x', [], { system: 5 }]) {
      const error = outcome(() => write([], options));
      expect(WireError.is(error) && error.code).toBe('invalid');
    }
  });
});

describe('a transcript already in parsed form is converted as it is', () => {
  it('gives the same output as after parseMessages', () => {
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: { b: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'ok' }] },
    ];
    expect(toOpenAIChat(messages)).toEqual(toOpenAIChat(parseMessages(messages)));
    expect(toModelMessages(messages)).toEqual(toModelMessages(parseMessages(messages)));
    expect(toAnthropicMessages(messages)).toEqual(toAnthropicMessages(parseMessages(messages)));
  });
});
