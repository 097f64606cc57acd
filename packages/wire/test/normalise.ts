// What a round trip is expected to give back, spelled as functions of the input.
import type {
  AssistantBlock,
  ImageMediaType,
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

/**
 * A `url` image whose URL is a base64 `data:` URL of one of the four image types, spelled as
 * the `base64` source both converters give back for it (same bytes, one spelling).
 */
export function inlineDataUrls(messages: readonly Message[]): Message[] {
  const inline = <B extends UserBlock>(block: B): B => {
    if (block.type === 'image' && block.source.type === 'url') {
      const match = /^data:(image\/(?:jpeg|png|gif|webp));base64,(.*)$/s.exec(block.source.url);
      if (match?.[1] && match[2] !== undefined) {
        return {
          type: 'image',
          source: { type: 'base64', media_type: match[1] as ImageMediaType, data: match[2] },
        } as B;
      }
    }
    if (block.type === 'tool_result' && Array.isArray(block.content)) {
      return { ...block, content: block.content.map(inline) };
    }
    return block;
  };
  return messages.map(
    (message): Message =>
      message.role === 'user' ? { role: 'user', content: message.content.map(inline) } : message,
  );
}
