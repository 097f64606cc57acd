import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fromModelMessages,
  fromOpenAIChat,
  isJsonValue,
  JsonValueSchema,
  MAX_JSON_DEPTH,
  parseMessages,
  toOpenAIChat,
  WireError,
} from './index.js';

/** `[1, <hole>, 3]`: index 1 is missing, not undefined. */
function sparse(): number[] {
  const array = [1, 2, 3];
  delete array[1];
  return array;
}

describe('JsonValue', () => {
  it('accepts everything JSON.parse can produce', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(isJsonValue(value)).toBe(true);
        expect(JsonValueSchema.safeParse(value).success).toBe(true);
      }),
    );
  });

  it('accepts null-prototype objects and shared (non-cyclic) references', () => {
    const shared = { a: 1 };
    const bare = Object.assign(Object.create(null) as object, { x: 1 });
    expect(isJsonValue({ left: shared, right: [shared, shared] })).toBe(true);
    expect(isJsonValue(bare)).toBe(true);
  });

  it.each([
    ['undefined', undefined],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a bigint', 1n],
    ['a symbol', Symbol('s')],
    ['a function', () => 1],
    ['a Date', new Date(0)],
    ['a Map', new Map()],
    ['a class instance', new (class Point {})()],
    ['a sparse array', sparse()],
  ])('refuses %s', (_name, value) => {
    expect(isJsonValue(value)).toBe(false);
    expect(JsonValueSchema.safeParse(value).success).toBe(false);
  });

  it('refuses cycles, and says where', () => {
    const a: Record<string, unknown> = {};
    a.b = { c: [a] };
    expect(isJsonValue(a)).toBe(false);
    const result = JsonValueSchema.safeParse(a);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['b', 'c', 0]);
    expect(result.error?.issues[0]?.message).toContain('cycle');
  });

  it('names the class of a non-plain object', () => {
    const result = JsonValueSchema.safeParse({ at: new Date(0) });
    expect(result.error?.issues[0]?.message).toContain('a Date is not a plain JSON object');
  });

  it('returns false (never throws) for a throwing getter', () => {
    const hostile = {
      get x(): number {
        throw new Error('boom');
      },
    };
    expect(isJsonValue(hostile)).toBe(false);
    expect(JsonValueSchema.safeParse(hostile).success).toBe(false);
  });
});

/** `depth` arrays, each inside the last, around a 0 (built without recursion). */
function nested(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = i % 2 ? { k: value } : [value];
  return value;
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('nesting depth', () => {
  it(`accepts ${MAX_JSON_DEPTH} nested arrays and objects and refuses one more, by counting`, () => {
    expect(MAX_JSON_DEPTH).toBe(256);
    expect(isJsonValue(nested(MAX_JSON_DEPTH))).toBe(true);
    expect(isJsonValue(nested(MAX_JSON_DEPTH + 1))).toBe(false);
    const result = JsonValueSchema.safeParse(nested(MAX_JSON_DEPTH + 1));
    expect(result.error?.issues[0]?.message).toBe(
      `expected a JSON value: it is nested deeper than ${MAX_JSON_DEPTH} arrays and objects`,
    );
    expect(result.error?.issues[0]?.path).toHaveLength(MAX_JSON_DEPTH);
  });

  it('refuses 100,000 levels the same way (no stack overflow, whatever the stack size)', () => {
    const deep = nested(100_000);
    expect(isJsonValue(deep)).toBe(false);
    expect(JsonValueSchema.safeParse(deep).error?.issues[0]?.message).toContain('nested deeper');
  });

  it('every entry point refuses a too deep tool input as invalid, with the same reason', () => {
    const deep = nested(MAX_JSON_DEPTH + 1);
    const args = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const errors = [
      thrown(() =>
        parseMessages([
          { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input: deep }] },
        ]),
      ),
      thrown(() =>
        fromOpenAIChat([
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: args } }],
          },
        ]),
      ),
      thrown(() =>
        fromModelMessages([
          {
            role: 'assistant',
            content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'f', input: deep }],
          },
        ]),
      ),
    ];
    for (const error of errors) {
      expect(WireError.is(error) && error.code).toBe('invalid');
      expect((error as Error).message).toContain(
        `expected a JSON value: it is nested deeper than ${MAX_JSON_DEPTH} arrays and objects`,
      );
    }
  });

  it(`a tool input exactly ${MAX_JSON_DEPTH} deep goes through OpenAI chat and back`, () => {
    const input = nested(MAX_JSON_DEPTH) as never;
    const messages = parseMessages([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'f', input }] },
    ]);
    expect(fromOpenAIChat(toOpenAIChat(messages)).messages).toEqual(messages);
  });
});
