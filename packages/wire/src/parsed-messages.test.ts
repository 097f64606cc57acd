import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { transcript } from '../test/arbitraries.js';
import { isParsedMessages, MessageSchema, parseMessages } from './index.js';

const schema = MessageSchema.array();

describe('isParsedMessages', () => {
  it('says yes to parsed transcripts, and parsing them changes nothing', () => {
    fc.assert(
      fc.property(transcript({ toolResultImages: true }), (messages) => {
        const json = JSON.parse(JSON.stringify(parseMessages(messages)));
        expect(isParsedMessages(json)).toBe(true);
        expect(schema.parse(json)).toEqual(json);
      }),
    );
  });

  it('never says yes to what the schema would reject or change', () => {
    const anything = fc.anything({
      withNullPrototype: true,
      values: [
        fc.constantFrom('user', 'assistant', 'text', 'image', 'tool_use', 'tool_result', 'url'),
        fc.constantFrom('thinking', 'redacted_thinking', 'base64', 'image/png', ''),
      ],
      key: fc.constantFrom('role', 'content', 'type', 'text', 'id', 'name', 'input', 'x'),
    });
    fc.assert(
      fc.property(fc.array(anything, { maxLength: 3 }), (value) => {
        if (!isParsedMessages(value)) return;
        const parsed = schema.safeParse(value);
        expect(parsed.success).toBe(true);
        expect(parsed.data).toEqual(value);
      }),
    );
  });

  it.each([
    ['string content', [{ role: 'user', content: 'hi' }]],
    ['an extra field', [{ role: 'user', content: [{ type: 'text', text: 'a', x: 1 }] }]],
    ['an extra message field', [{ role: 'user', content: [], id: 'm1' }]],
    ['an unknown role', [{ role: 'system', content: [] }]],
    [
      'a tool_use in a user message',
      [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'b', input: {} }] }],
    ],
    [
      'a tool_use without input',
      [{ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'b' }] }],
    ],
    [
      'an empty tool_use id',
      [{ role: 'assistant', content: [{ type: 'tool_use', id: '', name: 'b', input: 1 }] }],
    ],
    [
      'a non-JSON input',
      [
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'a', name: 'b', input: new Date() }],
        },
      ],
    ],
    [
      'a bad media type',
      [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'text/plain', data: '' } },
          ],
        },
      ],
    ],
    [
      'is_error not boolean',
      [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', is_error: 'yes' }] }],
    ],
    ['a missing message', [undefined, { role: 'user', content: [] }]],
    ['not an array', { role: 'user', content: [] }],
  ])('says no to %s', (_, value) => {
    expect(isParsedMessages(value)).toBe(false);
  });

  it('says no (rather than throwing) to a revoked proxy', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(isParsedMessages([proxy])).toBe(false);
  });
});
