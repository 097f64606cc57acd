import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isJsonValue, JsonValueSchema } from './index.js';

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
