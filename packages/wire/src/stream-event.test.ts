import { describe, expect, it } from 'vitest';
import { type StreamEvent, StreamEventSchema, TodoSchema } from './index.js';

describe('StreamEvent', () => {
  const events: StreamEvent[] = [
    { type: 'text-delta', text: 'Hel' },
    { type: 'tool-progress', toolCallId: 't1', message: 'downloading 3/10' },
    {
      type: 'plan-updated',
      todos: [
        { id: '1', content: 'read', status: 'completed' },
        { id: '2', content: 'write', status: 'in_progress' },
        { id: '3', content: 'ship', status: 'pending' },
      ],
    },
    {
      type: 'interrupt-raised',
      toolCallId: 't2',
      kind: 'ask_user',
      payload: { question: 'Which?' },
    },
    { type: 'interrupt-resolved', toolCallId: 't2', result: { action: 'accept', content: 'A' } },
    { type: 'turn-ended', reason: 'completed' },
    { type: 'turn-ended', reason: 'suspended' },
    { type: 'turn-ended', reason: 'cancelled' },
    { type: 'turn-ended', reason: 'failed', error: 'model timed out' },
  ];

  it.each(events.map((event) => [event.type, event] as const))(
    '%s parses and survives JSON',
    (_type, event) => {
      expect(StreamEventSchema.parse(event)).toEqual(event);
      expect(StreamEventSchema.parse(JSON.parse(JSON.stringify(event)))).toEqual(event);
    },
  );

  it.each([
    ['an unknown type', { type: 'tool-started' }, ['type']],
    ['text-delta without text', { type: 'text-delta' }, ['text']],
    [
      'an unknown todo status',
      { type: 'plan-updated', todos: [{ id: '1', content: 'x', status: 'done' }] },
      ['todos', 0, 'status'],
    ],
    [
      'a todo without id',
      { type: 'plan-updated', todos: [{ id: '', content: 'x', status: 'pending' }] },
      ['todos', 0, 'id'],
    ],
    [
      'a payload that is not JSON',
      { type: 'interrupt-raised', toolCallId: 't', kind: 'k', payload: { f: () => 1 } },
      ['payload', 'f'],
    ],
    [
      'a result that is not JSON',
      { type: 'interrupt-resolved', toolCallId: 't', result: undefined },
      ['result'],
    ],
    ['an unknown end reason', { type: 'turn-ended', reason: 'paused' }, ['reason']],
  ])('refuses %s', (_name, input, path) => {
    const result = StreamEventSchema.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(path);
  });

  it('Todo schema is exported on its own', () => {
    expect(TodoSchema.parse({ id: 'a', content: 'c', status: 'pending' })).toEqual({
      id: 'a',
      content: 'c',
      status: 'pending',
    });
  });
});
