import { describe, expect, it } from 'vitest';
import { ContinuationError } from './errors.js';
import { prepareSave } from './store.js';
import type { Suspension } from './suspension.js';
import { sampleSuspension } from './testing/index.js';

// prepareSave checks a transcript already in its parsed shape in place (no schema copy):
// the record and every refusal must be what the schema path gives.
describe('prepareSave', () => {
  it('writes a parsed transcript as given, and normalises string content like the schema', () => {
    const s = sampleSuspension({ messages: true });
    const messages = s.messages ?? [];
    expect(JSON.parse(prepareSave(s).text).messages).toEqual(messages);

    const first = messages[0];
    if (first?.role !== 'user' || first.content[0]?.type !== 'text') throw new Error('fixture');
    const loose = [{ role: 'user', content: first.content[0].text }, ...messages.slice(1)];
    const { text } = prepareSave({ ...s, messages: loose } as unknown as Suspension);
    expect(JSON.parse(text).messages).toEqual(messages);
  });

  it('refuses a bad block inside a parsed-shape transcript, naming its field', () => {
    const s = sampleSuspension({ messages: true });
    const messages = [...(s.messages ?? [])];
    messages[0] = { role: 'user', content: [{ type: 'text', text: 42 }] } as never;
    const err = (() => {
      try {
        prepareSave({ ...s, messages });
      } catch (e) {
        return e;
      }
    })();
    expect(ContinuationError.is(err) && [err.code, err.field]).toEqual([
      'invalid',
      'messages[0].content[0].text',
    ]);
  });

  it('refuses a tool_result that answers nothing, even when every block has its shape', () => {
    const s = sampleSuspension({ messages: true });
    const stray = {
      role: 'user' as const,
      content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_nowhere', content: 'x' }],
    };
    expect(() => prepareSave({ ...s, messages: [stray, ...(s.messages ?? [])] })).toThrow(
      expect.objectContaining({ code: 'invalid' }),
    );
  });
});
