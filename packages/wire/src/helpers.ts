import type {
  AssistantBlock,
  ImageBlock,
  TextBlock,
  ToolResultBlock,
  ToolUseBlock,
  UserBlock,
} from './blocks.js';
import type { AssistantMessage, Message, UserMessage } from './message.js';

/** The `tool_use` blocks of a message, in order. */
export function toolUses(message: Message): ToolUseBlock[] {
  return message.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
}

/** The `tool_result` blocks of a message, in order. */
export function toolResults(message: Message): ToolResultBlock[] {
  return message.content.filter((block): block is ToolResultBlock => block.type === 'tool_result');
}

/**
 * A `tool_result` block answering `toolUseId`.
 *
 * @example
 * userMessage(toolResult('toolu_1', 'Paris', { isError: false }))
 */
export function toolResult(
  toolUseId: string,
  content: string | Array<TextBlock | ImageBlock>,
  options: { isError?: boolean } = {},
): ToolResultBlock {
  const block: ToolResultBlock = { type: 'tool_result', tool_use_id: toolUseId, content };
  if (options.isError) block.is_error = true;
  return block;
}

function asBlocks<B>(parts: Array<string | B>): Array<B | TextBlock> {
  return parts.map((part) => (typeof part === 'string' ? { type: 'text', text: part } : part));
}

/** A user message from strings (text blocks) and blocks. */
export function userMessage(...parts: Array<string | UserBlock>): UserMessage {
  return { role: 'user', content: asBlocks(parts) };
}

/** An assistant message from strings (text blocks) and blocks. */
export function assistantMessage(...parts: Array<string | AssistantBlock>): AssistantMessage {
  return { role: 'assistant', content: asBlocks(parts) };
}

/** The text blocks of a message joined together (thinking and tool blocks left out). */
export function textOf(message: Message): string {
  let text = '';
  for (const block of message.content) if (block.type === 'text') text += block.text;
  return text;
}
