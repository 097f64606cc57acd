// What a round trip is expected to give back, spelled as functions of the input.
import type {
  AssistantBlock,
  JsonValue,
  Message,
  ToolResultBlock,
  UserBlock,
} from '../src/index.js';

/**
 * Equal-meaning spellings both converters write one way: a tool_result without content is
 * one with content '', and `is_error: false` is no `is_error`.
 */
export function equivalent(messages: readonly Message[]): Message[] {
  return messages.map((message): Message => {
    if (message.role === 'assistant') return message;
    return {
      role: 'user',
      content: message.content.map((block): UserBlock => {
        if (block.type !== 'tool_result') return block;
        const out: ToolResultBlock = {
          type: 'tool_result',
          tool_use_id: block.tool_use_id,
          content: block.content ?? '',
        };
        if (block.is_error) out.is_error = true;
        return out;
      }),
    };
  });
}

/**
 * What OpenAI chat keeps of a transcript: thinking, redacted thinking and is_error
 * dropped; an assistant's text moved before its tool calls; tool results first in their
 * user message; -0 in a tool input becomes 0 (JSON text has no negative zero).
 */
export function openAIChatVisible(messages: readonly Message[]): Message[] {
  return equivalent(messages).map((message): Message => {
    if (message.role === 'assistant') {
      const kept = message.content.filter(
        (block): block is Extract<AssistantBlock, { type: 'text' | 'tool_use' }> =>
          block.type === 'text' || block.type === 'tool_use',
      );
      return {
        role: 'assistant',
        content: [
          ...kept.filter((b) => b.type === 'text'),
          // `arguments` is JSON text, and JSON has no negative zero: -0 comes back as 0.
          ...kept.flatMap((b) =>
            b.type === 'tool_use'
              ? [{ ...b, input: JSON.parse(JSON.stringify(b.input)) as JsonValue }]
              : [],
          ),
        ],
      };
    }
    const results = message.content.filter((b): b is ToolResultBlock => b.type === 'tool_result');
    return {
      role: 'user',
      content: [
        ...results.map(({ is_error: _dropped, ...rest }) => rest),
        ...message.content.filter((b) => b.type !== 'tool_result'),
      ],
    };
  });
}
