import { describe, expect, it } from 'vitest';
import {
  assistantMessage,
  type Message,
  parseMessages,
  textOf,
  toolResult,
  toolResults,
  toolUses,
  userMessage,
} from './index.js';

const assistant: Message = {
  role: 'assistant',
  content: [
    { type: 'thinking', thinking: 'secret plan', signature: 's' },
    { type: 'text', text: 'Let me ' },
    { type: 'tool_use', id: 'a', name: 'search', input: { q: 'x' } },
    { type: 'text', text: 'check.' },
    { type: 'tool_use', id: 'b', name: 'ask_user', input: {} },
  ],
};

describe('helpers', () => {
  it('toolUses returns the tool_use blocks in order', () => {
    expect(toolUses(assistant).map((block) => block.id)).toEqual(['a', 'b']);
    expect(toolUses(userMessage('hi'))).toEqual([]);
  });

  it('toolResults returns the tool_result blocks in order', () => {
    const user = userMessage(toolResult('b', 'two'), 'and', toolResult('a', 'one'));
    expect(toolResults(user).map((block) => block.tool_use_id)).toEqual(['b', 'a']);
    expect(toolResults(assistant)).toEqual([]);
  });

  it('toolResult builds a result; is_error only when it is an error', () => {
    expect(toolResult('t', 'ok')).toEqual({ type: 'tool_result', tool_use_id: 't', content: 'ok' });
    expect(toolResult('t', 'ok', { isError: false })).toEqual({
      type: 'tool_result',
      tool_use_id: 't',
      content: 'ok',
    });
    expect(toolResult('t', 'failed', { isError: true })).toEqual({
      type: 'tool_result',
      tool_use_id: 't',
      content: 'failed',
      is_error: true,
    });
    const blocks = [
      { type: 'text' as const, text: 'see' },
      { type: 'image' as const, source: { type: 'url' as const, url: 'https://x.test/i.png' } },
    ];
    expect(toolResult('t', blocks).content).toEqual(blocks);
  });

  it('userMessage and assistantMessage turn strings into text blocks and keep blocks', () => {
    expect(userMessage('a', toolResult('t', 'r'))).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'a' },
        { type: 'tool_result', tool_use_id: 't', content: 'r' },
      ],
    });
    expect(assistantMessage('x', { type: 'tool_use', id: 't', name: 'f', input: null })).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'x' },
        { type: 'tool_use', id: 't', name: 'f', input: null },
      ],
    });
    expect(userMessage()).toEqual({ role: 'user', content: [] });
  });

  it('what the helpers build is a valid transcript', () => {
    const transcript = [
      userMessage('go'),
      assistantMessage({ type: 'tool_use', id: 't', name: 'f', input: {} }),
      userMessage(toolResult('t', 'done', { isError: true })),
      assistantMessage('finished'),
    ];
    expect(parseMessages(transcript)).toEqual(transcript);
  });

  it('textOf joins text blocks only (no thinking, no tool blocks)', () => {
    expect(textOf(assistant)).toBe('Let me check.');
    expect(textOf(userMessage(toolResult('t', 'hidden')))).toBe('');
    expect(textOf(userMessage('a', 'b'))).toBe('ab');
  });
});
