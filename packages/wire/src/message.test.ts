import { describe, expect, it } from 'vitest';
import { type Message, MessageSchema, parseMessage, parseMessages, WireError } from './index.js';

/** `[1, <hole>, 3]`: index 1 is missing, not undefined. */
function sparse(): number[] {
  const array = [1, 2, 3];
  delete array[1];
  return array;
}

/** Runs `fn`, expects a WireError, and returns it. */
function wireError(fn: () => unknown): WireError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(WireError);
    if (!WireError.is(error)) throw error;
    return error;
  }
  throw new Error('expected a WireError, nothing was thrown');
}

const base64Image = {
  type: 'image',
  source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
} as const;
const urlImage = { type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } } as const;

describe('every block type parses', () => {
  it('user: text, base64 image, url image, tool_result in each content form', () => {
    const message = {
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        base64Image,
        urlImage,
        { type: 'tool_result', tool_use_id: 't1', content: 'done' },
        {
          type: 'tool_result',
          tool_use_id: 't2',
          content: [{ type: 'text', text: 'a' }, urlImage],
        },
        { type: 'tool_result', tool_use_id: 't3', is_error: true },
      ],
    };
    expect(parseMessage(message)).toEqual(message);
  });

  it('assistant: text, tool_use with any JSON input, thinking, redacted_thinking', () => {
    const message = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'sig==' },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
        { type: 'text', text: 'calling' },
        { type: 'tool_use', id: 't1', name: 'f', input: { a: [1, null, true, 'x', { b: -2.5 }] } },
        { type: 'tool_use', id: 't2', name: 'g', input: null },
        { type: 'tool_use', id: 't3', name: 'h', input: 'plain string' },
      ],
    };
    expect(parseMessage(message)).toEqual(message);
  });

  it('content given as a string becomes one text block', () => {
    expect(parseMessage({ role: 'user', content: 'hi' })).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'hi' }],
    });
    expect(parseMessage({ role: 'assistant', content: '' })).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: '' }],
    });
  });

  it('the schema and parseMessage agree', () => {
    const value = { role: 'user', content: [{ type: 'text', text: 'x' }] };
    expect(MessageSchema.parse(value)).toEqual(parseMessage(value));
  });
});

describe('thinking survives save and resume byte for byte', () => {
  it('parse → JSON.stringify → parse leaves thinking, signature and redacted data unchanged', () => {
    // Unicode, escapes, whitespace at the edges: everything a careless trim or normalise would touch.
    const thinking = '  Let me think…\n\t"quoted" \\ back\u2028slash 🤔 e\u0301  ';
    const signature = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/=';
    const data = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw\n';
    const original = JSON.stringify({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking, signature },
        { type: 'redacted_thinking', data },
        { type: 'text', text: 'ok' },
      ],
    });
    const once = parseMessage(JSON.parse(original));
    const saved = JSON.stringify(once);
    expect(saved).toBe(original);
    const again = parseMessage(JSON.parse(saved));
    expect(JSON.stringify(again)).toBe(original);
    expect(again.content[0]).toEqual({ type: 'thinking', thinking, signature });
    expect(again.content[1]).toEqual({ type: 'redacted_thinking', data });
  });
});

describe('parse errors: code, path and a message naming the path', () => {
  const cases: Array<{ name: string; input: unknown; path: Array<string | number> }> = [
    { name: 'null', input: null, path: [] },
    { name: 'a number', input: 42, path: [] },
    { name: 'a string', input: 'hello', path: [] },
    { name: 'a function', input: () => 1, path: [] },
    { name: 'an array', input: [], path: [] },
    { name: 'a missing role', input: { content: 'x' }, path: ['role'] },
    { name: 'an unknown role', input: { role: 'system', content: 'x' }, path: ['role'] },
    { name: 'missing content', input: { role: 'user' }, path: ['content'] },
    { name: 'content of the wrong type', input: { role: 'user', content: 5 }, path: ['content'] },
    {
      name: 'a block that is not an object',
      input: { role: 'user', content: [null] },
      path: ['content', 0],
    },
    {
      name: 'an unknown block type',
      input: { role: 'user', content: [{ type: 'video' }] },
      path: ['content', 0, 'type'],
    },
    {
      name: 'a block without type',
      input: { role: 'user', content: [{ text: 'x' }] },
      path: ['content', 0, 'type'],
    },
    {
      name: 'text that is not a string',
      input: {
        role: 'user',
        content: [
          { type: 'text', text: 'ok' },
          { type: 'text', text: 1 },
        ],
      },
      path: ['content', 1, 'text'],
    },
    {
      name: 'tool_use in a user message',
      input: { role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] },
      path: ['content', 0, 'type'],
    },
    {
      name: 'tool_result in an assistant message',
      input: { role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 'a' }] },
      path: ['content', 0, 'type'],
    },
    {
      name: 'an image in an assistant message',
      input: { role: 'assistant', content: [urlImage] },
      path: ['content', 0, 'type'],
    },
    {
      name: 'thinking in a user message',
      input: { role: 'user', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] },
      path: ['content', 0, 'type'],
    },
    {
      name: 'an unknown image source type',
      input: { role: 'user', content: [{ type: 'image', source: { type: 'file', id: 'f' } }] },
      path: ['content', 0, 'source', 'type'],
    },
    {
      name: 'a non-image media type',
      input: {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'text/plain', data: '' } },
        ],
      },
      path: ['content', 0, 'source', 'media_type'],
    },
    ...[
      'IMAGE/PNG',
      'image/png;name=a.png',
      'image/svg+xml',
      'image/jpg',
      'application/pdf',
      '',
    ].map((mediaType) => ({
      name: `media type ${JSON.stringify(mediaType)} (only Anthropic's four)`,
      input: {
        role: 'user',
        content: [{ type: 'image', source: { type: 'base64', media_type: mediaType, data: '' } }],
      },
      path: ['content', 0, 'source', 'media_type'],
    })),
    {
      name: 'an unusual media type inside a tool result',
      input: {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'a',
            content: [
              {
                type: 'image',
                source: { type: 'base64', media_type: 'image/png;name=a.png', data: '' },
              },
            ],
          },
        ],
      },
      path: ['content', 0, 'content', 0, 'source', 'media_type'],
    },
    {
      name: 'base64 image without data',
      input: {
        role: 'user',
        content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }],
      },
      path: ['content', 0, 'source', 'data'],
    },
    {
      name: 'url image without url',
      input: { role: 'user', content: [{ type: 'image', source: { type: 'url' } }] },
      path: ['content', 0, 'source', 'url'],
    },
    {
      name: 'an empty tool_use id',
      input: { role: 'assistant', content: [{ type: 'tool_use', id: '', name: 'f', input: {} }] },
      path: ['content', 0, 'id'],
    },
    {
      name: 'an empty tool name',
      input: { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: '', input: {} }] },
      path: ['content', 0, 'name'],
    },
    {
      name: 'a tool input that is not JSON (undefined)',
      input: {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'a', name: 'f', input: { x: undefined } }],
      },
      path: ['content', 0, 'input', 'x'],
    },
    {
      name: 'a tool input with NaN deep inside',
      input: {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'a', name: 'f', input: { a: [1, { b: Number.NaN }] } }],
      },
      path: ['content', 0, 'input', 'a', 1, 'b'],
    },
    {
      name: 'a tool input holding a Date',
      input: {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'a', name: 'f', input: { when: new Date(0) } }],
      },
      path: ['content', 0, 'input', 'when'],
    },
    {
      name: 'a tool input holding a function',
      input: {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'a', name: 'f', input: { f: () => 1 } }],
      },
      path: ['content', 0, 'input', 'f'],
    },
    {
      name: 'a tool input holding a bigint',
      input: {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'a', name: 'f', input: [1n] }],
      },
      path: ['content', 0, 'input', 0],
    },
    {
      name: 'a tool input with a hole',
      input: {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'a', name: 'f', input: sparse() }],
      },
      path: ['content', 0, 'input', 1],
    },
    {
      name: 'a tool_use without input',
      input: { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f' }] },
      path: ['content', 0, 'input'],
    },
    {
      name: 'an empty tool_use_id',
      input: { role: 'user', content: [{ type: 'tool_result', tool_use_id: '' }] },
      path: ['content', 0, 'tool_use_id'],
    },
    {
      name: 'tool_result content of the wrong type',
      input: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 3 }] },
      path: ['content', 0, 'content'],
    },
    {
      name: 'a tool_use block inside tool_result content',
      input: {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'a', content: [{ type: 'tool_use' }] }],
      },
      path: ['content', 0, 'content', 0, 'type'],
    },
    {
      name: 'bad text inside tool_result content',
      input: {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text' }] }],
      },
      path: ['content', 0, 'content', 0, 'text'],
    },
    {
      name: 'is_error that is not a boolean',
      input: {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'a', is_error: 'yes' }],
      },
      path: ['content', 0, 'is_error'],
    },
    {
      name: 'thinking without signature',
      input: { role: 'assistant', content: [{ type: 'thinking', thinking: 'x' }] },
      path: ['content', 0, 'signature'],
    },
    {
      name: 'redacted_thinking without data',
      input: { role: 'assistant', content: [{ type: 'redacted_thinking' }] },
      path: ['content', 0, 'data'],
    },
  ];

  for (const { name, input, path } of cases) {
    it(`${name} → invalid at ${JSON.stringify(path)}`, () => {
      const error = wireError(() => parseMessage(input));
      expect(error.code).toBe('invalid');
      expect(error.path).toEqual(path);
      const rendered = path.reduce<string>(
        (out, key) => (typeof key === 'number' ? `${out}[${key}]` : `${out}.${key}`),
        'message',
      );
      expect(error.message).toMatch(/^\[@x\/wire\] /);
      expect(error.message).toContain(`${rendered}:`);
      expect(error.name).toBe('WireError');
    });
  }

  it('parseMessages names the index of the bad message', () => {
    const error = wireError(() =>
      parseMessages([
        { role: 'user', content: 'a' },
        { role: 'assistant', content: [{ type: 'text' }] },
      ]),
    );
    expect(error.path).toEqual([1, 'content', 0, 'text']);
    expect(error.message).toContain('messages[1].content[0].text:');
  });

  it('parseMessages refuses what is not an array', () => {
    for (const input of [null, undefined, 1, 'x', {}, () => []]) {
      const error = wireError(() => parseMessages(input));
      expect(error.code).toBe('invalid');
      expect(error.path).toEqual([]);
      expect(error.message).toContain('messages:');
    }
  });

  it('a cyclic message is a WireError, not a stack overflow', () => {
    const message: Record<string, unknown> = { role: 'user' };
    message.content = [message];
    const error = wireError(() => parseMessage(message));
    expect(error.code).toBe('invalid');
    expect(error.path).toEqual(['content', 0, 'type']);

    const input: Record<string, unknown> = { a: 1 };
    input.self = input;
    const inner = wireError(() =>
      parseMessage({
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'a', name: 'f', input }],
      }),
    );
    expect(inner.path).toEqual(['content', 0, 'input', 'self']);
    expect(inner.message).toContain('cycle');
  });

  it('an object whose getter throws is a WireError carrying the cause', () => {
    const boom = new Error('boom');
    const hostile = {
      get role(): string {
        throw boom;
      },
    };
    const error = wireError(() => parseMessage(hostile));
    expect(error.code).toBe('invalid');
    expect(error.cause).toBe(boom);

    const input = {
      get x(): number {
        throw boom;
      },
    };
    const inInput = wireError(() =>
      parseMessage({
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'a', name: 'f', input }],
      }),
    );
    expect(inInput.path).toEqual(['content', 0, 'input']);
  });

  it('a revoked proxy is a WireError', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(wireError(() => parseMessage(proxy)).code).toBe('invalid');
    expect(wireError(() => parseMessages([proxy])).code).toBe('invalid');
  });

  it('the zod error is kept as cause', () => {
    const error = wireError(() => parseMessage({ role: 'user', content: 1 }));
    expect(error.cause).toBeInstanceOf(Error);
  });
});

describe('checkTranscript (through parseMessages)', () => {
  const ask = (id: string): Message => ({
    role: 'assistant',
    content: [{ type: 'tool_use', id, name: 'ask_user', input: { q: '?' } }],
  });
  const answer = (id: string): Message => ({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: id, content: 'yes' }],
  });

  it('accepts a paired transcript and a suspended one (tool_use still unanswered)', () => {
    const paired = [{ role: 'user', content: 'go' }, ask('t1'), answer('t1'), ask('t2')];
    expect(parseMessages(paired)).toHaveLength(4);
  });

  it('accepts parallel tool calls answered in one user message, in any order', () => {
    const transcript: Message[] = [
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
          { type: 'tool_result', tool_use_id: 'b' },
          { type: 'tool_result', tool_use_id: 'a' },
        ],
      },
    ];
    expect(parseMessages(transcript)).toEqual(transcript);
  });

  it('refuses a tool_use id used twice', () => {
    const error = wireError(() => parseMessages([ask('t1'), answer('t1'), ask('t1')]));
    expect(error.code).toBe('invalid_transcript');
    expect(error.path).toEqual([2, 'content', 0]);
    expect(error.message).toContain('messages[2].content[0]');
    expect(error.message).toContain('"t1"');
  });

  it('refuses a tool_use id used twice in one message', () => {
    const twice: Message = {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'x', name: 'f', input: 1 },
        { type: 'tool_use', id: 'x', name: 'f', input: 2 },
      ],
    };
    const error = wireError(() => parseMessages([twice]));
    expect(error.code).toBe('invalid_transcript');
    expect(error.path).toEqual([0, 'content', 1]);
  });

  it('refuses a tool_result for an unknown id', () => {
    const error = wireError(() => parseMessages([ask('t1'), answer('t9')]));
    expect(error.code).toBe('invalid_transcript');
    expect(error.path).toEqual([1, 'content', 0]);
    expect(error.message).toContain('answers no earlier tool_use');
  });

  it('refuses a tool_result that comes before its tool_use', () => {
    const error = wireError(() => parseMessages([answer('t1'), ask('t1')]));
    expect(error.code).toBe('invalid_transcript');
    expect(error.path).toEqual([0, 'content', 0]);
  });

  it('refuses a tool_use answered twice', () => {
    const error = wireError(() => parseMessages([ask('t1'), answer('t1'), answer('t1')]));
    expect(error.code).toBe('invalid_transcript');
    expect(error.path).toEqual([2, 'content', 0]);
    expect(error.message).toContain('answered twice');
  });

  it('parseMessage alone does not judge pairing (one message has no history)', () => {
    expect(parseMessage(answer('nowhere'))).toEqual(answer('nowhere'));
  });
});

describe('WireError', () => {
  it('is recognised across copies by its marker, not by class identity', () => {
    const foreign = { [Symbol.for('@x/wire.WireError')]: true, code: 'invalid' };
    expect(WireError.is(foreign)).toBe(true);
    expect(WireError.is(new Error('x'))).toBe(false);
    expect(WireError.is(null)).toBe(false);
    expect(WireError.is('WireError')).toBe(false);
  });
});
