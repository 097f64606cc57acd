import { type Message, toolResult, userMessage } from '@x/wire';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContinuationError } from './errors.js';
import { MemoryContinuationStore } from './memory.js';
import { resolve, resumeMessages } from './resume.js';
import { validateSingletonSuspension } from './singleton.js';
import { createSuspension, validateSuspension } from './suspension.js';
import { askingAssistant, sampleSuspension, transcriptEndingWith } from './testing/index.js';

function twoTools(): Message {
  return {
    role: 'assistant',
    content: [
      ...askingAssistant('t1').content,
      { type: 'tool_use', id: 't2', name: 'rm', input: {} },
    ],
  };
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (ContinuationError.is(err)) return err.code;
    throw err;
  }
  return undefined;
}

describe('validateSingletonSuspension', () => {
  it('accepts the only tool use of an assistant message', () => {
    expect(() => validateSingletonSuspension(askingAssistant('t1'), 't1')).not.toThrow();
  });

  it('refuses a sibling tool use, an absent id and a user message', () => {
    const two = twoTools();
    expect(codeOf(() => validateSingletonSuspension(two, 't1'))).toBe('not_singleton');
    expect(codeOf(() => validateSingletonSuspension(askingAssistant('t1'), 't9'))).toBe(
      'not_singleton',
    );
    expect(
      codeOf(() => validateSingletonSuspension({ role: 'assistant', content: [] }, 't1')),
    ).toBe('not_singleton');
    expect(codeOf(() => validateSingletonSuspension(userMessage('hi'), 't1'))).toBe(
      'not_singleton',
    );
  });
});

describe('createSuspension', () => {
  it('fills version, createdAt and resolved and takes toolName/toolInput from the tool use', () => {
    const before = Date.now();
    const s = createSuspension({
      interactionId: 'ask-1',
      toolUseId: 't1',
      assistant: askingAssistant('t1'),
    });
    expect(s).toMatchObject({ version: 1, resolved: false, toolName: 'ask_user' });
    expect(s.toolInput).toEqual({ question: 'Deploy to production?', options: ['yes', 'no'] });
    expect(s.createdAt.getTime()).toBeGreaterThanOrEqual(before);
  });

  it('keeps the messages of a transcript in its parsed shape, in an array of its own', () => {
    const assistant = askingAssistant('t1');
    const messages = transcriptEndingWith(assistant);
    const s = createSuspension({ interactionId: 'a', toolUseId: 't1', assistant, messages });
    expect(s.messages).toEqual(messages);
    expect(s.messages).not.toBe(messages);
    expect(s.messages?.every((m, i) => m === messages[i])).toBe(true);
    // String content is not the parsed shape: the schema normalises it, in a copy.
    const plain = createSuspension({
      interactionId: 'b',
      toolUseId: 't1',
      assistant,
      messages: [{ role: 'user', content: 'hi' } as never, assistant],
    });
    expect(plain.messages?.[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'hi' }] });
  });

  it('refuses a non-singleton suspension and a transcript not ending with the assistant', () => {
    const two = twoTools();
    expect(
      codeOf(() => createSuspension({ interactionId: 'a', toolUseId: 't1', assistant: two })),
    ).toBe('not_singleton');
    const assistant = askingAssistant('t1');
    const messages = [...transcriptEndingWith(assistant), userMessage('after')];
    expect(
      codeOf(() => createSuspension({ interactionId: 'a', toolUseId: 't1', assistant, messages })),
    ).toBe('invalid');
  });

  it('refuses a transcript whose tool calls do not pair up, naming the block', () => {
    const assistant = askingAssistant('t1');
    const messages = [
      userMessage({ type: 'tool_result', tool_use_id: 'ghost', content: 'x' }),
      assistant,
    ];
    let err: unknown;
    try {
      validateSuspension({ ...sampleSuspension({ toolUseId: 't1', assistant }), messages });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'invalid', field: 'messages[0].content[0]' });
  });
});

describe('resumeMessages', () => {
  it('without messages: exactly [assistant, user(result)]', () => {
    const s = sampleSuspension();
    const r = toolResult(s.toolUseId, 'yes');
    expect(resumeMessages(s, r)).toEqual([s.assistant, userMessage(r)]);
  });

  it('with messages: the full transcript plus the answer, never duplicating the assistant', () => {
    const s = sampleSuspension({ messages: true });
    const r = toolResult(s.toolUseId, 'yes', { isError: true });
    const out = resumeMessages(s, r);
    expect(out).toEqual([...(s.messages ?? []), userMessage(r)]);
    expect(
      out.filter((m) => m === s.assistant || JSON.stringify(m) === JSON.stringify(s.assistant)),
    ).toHaveLength(1);
  });

  it('is pure: the suspension is not changed', () => {
    const s = sampleSuspension({ messages: true });
    const copy = structuredClone(s);
    resumeMessages(s, toolResult(s.toolUseId, 'yes'));
    expect(s).toEqual(copy);
  });

  it('a result for another tool use, or not a tool_result, is mismatched_result', () => {
    const s = sampleSuspension();
    expect(codeOf(() => resumeMessages(s, toolResult('other', 'yes')))).toBe('mismatched_result');
    const text = { type: 'text', text: 'yes' } as unknown as Parameters<typeof resumeMessages>[1];
    expect(codeOf(() => resumeMessages(s, text))).toBe('mismatched_result');
  });

  it('pairs any answer with the suspended tool use and never duplicates the transcript (property)', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.string(), fc.boolean(), (withMessages, text, isError) => {
        const s = sampleSuspension(withMessages ? { messages: true } : {});
        const r = toolResult(s.toolUseId, text, { isError });
        const out = resumeMessages(s, r);
        expect(out.at(-1)).toEqual(userMessage(r));
        expect(out.slice(0, -1)).toEqual(s.messages ?? [s.assistant]);
        expect(codeOf(() => resumeMessages(s, toolResult(`${s.toolUseId}x`, text)))).toBe(
          'mismatched_result',
        );
      }),
      { numRuns: 100 },
    );
  });

  it('a resolved suspension is already_resolved', () => {
    const s = { ...sampleSuspension(), resolved: true };
    expect(codeOf(() => resumeMessages(s, toolResult(s.toolUseId, 'yes')))).toBe(
      'already_resolved',
    );
  });
});

describe('resolve', () => {
  it('checks the result before marking anything', async () => {
    const store = new MemoryContinuationStore();
    const s = sampleSuspension();
    await store.save(s);
    await expect(resolve(store, s, toolResult('other', 'x'))).rejects.toMatchObject({
      code: 'mismatched_result',
    });
    expect(await store.load(s.interactionId)).toEqual(s);
    expect(await resolve(store, s, toolResult(s.toolUseId, 'x'))).toHaveLength(2);
    await expect(store.load(s.interactionId)).rejects.toMatchObject({ code: 'already_resolved' });
  });
});

describe('ContinuationError', () => {
  it('has a stable name and code, keeps the cause, and is recognised across copies', () => {
    const cause = new Error('disk');
    const err = new ContinuationError('unavailable', 'x', { cause });
    expect(err.name).toBe('ContinuationError');
    expect(err.message).toBe('[@x/continuation] x');
    expect(err.cause).toBe(cause);
    const foreign = { [Symbol.for('@x/continuation.ContinuationError')]: true, code: 'not_found' };
    expect(ContinuationError.is(foreign)).toBe(true);
    expect(ContinuationError.is(new Error('x'))).toBe(false);
    expect(ContinuationError.hasCode(err, 'unavailable')).toBe(true);
  });
});
