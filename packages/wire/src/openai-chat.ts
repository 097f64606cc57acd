import type { TextBlock, ToolResultBlock, UserBlock } from './blocks.js';
import { converting, type Path, splitToolResults } from './convert-util.js';
import { converterMessages, converterSystem } from './converter-input.js';
import { formatPath, WireError } from './errors.js';
import type { AssistantMessage, Message } from './message.js';

import type {
  OpenAIChatAssistantMessage,
  OpenAIChatImagePart,
  OpenAIChatMessage,
  OpenAIChatTextPart,
  OpenAIChatToolCall,
  OpenAIChatToolMessage,
  ToOpenAIChatOptions,
} from './openai-chat-types.js';

function toolMessage(block: ToolResultBlock, path: Path): OpenAIChatToolMessage {
  const { content } = block;
  if (content === undefined || typeof content === 'string') {
    return { role: 'tool', tool_call_id: block.tool_use_id, content: content ?? '' };
  }
  const parts = content.map((item, k): OpenAIChatTextPart => {
    if (item.type === 'text') return { type: 'text', text: item.text };
    // A tool message holds text only. Dropping the image would change what the model
    // sees, so we refuse instead.
    throw new WireError(
      'unsupported',
      `${formatPath('messages', [...path, 'content', k])}: OpenAI chat cannot carry an image inside a tool result; send the image in a user message or describe it in text`,
      { path: [...path, 'content', k] },
    );
  });
  return { role: 'tool', tool_call_id: block.tool_use_id, content: parts };
}

function userPart(
  block: Exclude<UserBlock, ToolResultBlock>,
): OpenAIChatTextPart | OpenAIChatImagePart {
  if (block.type === 'text') return { type: 'text', text: block.text };
  const { source } = block;
  const url =
    source.type === 'url' ? source.url : `data:${source.media_type};base64,${source.data}`;
  return { type: 'image_url', image_url: { url } };
}

function assistantMessage(message: AssistantMessage, m: number): OpenAIChatAssistantMessage {
  // thinking and redacted_thinking are dropped: they are the provider's private state and
  // OpenAI chat has nowhere to put a signature.
  const texts = message.content.filter((block): block is TextBlock => block.type === 'text');
  const calls: OpenAIChatToolCall[] = [];
  message.content.forEach((block, b) => {
    if (block.type !== 'tool_use') return;
    let args: string;
    try {
      args = JSON.stringify(block.input);
    } catch (cause) {
      throw new WireError(
        'invalid',
        `${formatPath('messages', [m, 'content', b, 'input'])}: is not JSON`,
        {
          path: [m, 'content', b, 'input'],
          cause,
        },
      );
    }
    calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: args } });
  });
  const out: OpenAIChatAssistantMessage = {
    role: 'assistant',
    content:
      texts.length === 0
        ? null
        : texts.length === 1 && texts[0]
          ? texts[0].text
          : texts.map((block) => ({ type: 'text', text: block.text })),
  };
  if (calls.length > 0) out.tool_calls = calls;
  return out;
}

/**
 * Writes a transcript as OpenAI Chat Completions messages.
 *
 * - `options.system` becomes the first message.
 * - Each `tool_result` becomes a `role: 'tool'` message, placed before the rest of its
 *   user message (text and images), which follows as one `role: 'user'` message.
 * - An assistant message becomes `content` (its text; `null` when it has none) plus
 *   `tool_calls`; text written after a tool call moves before the calls.
 * - `thinking`, `redacted_thinking` and `is_error` are dropped (nowhere to put them).
 *
 * `messages` is checked first exactly as {@link parseMessages} checks it (schema, then the
 * pairing of tool calls), so malformed input is refused before anything is written.
 *
 * @throws {WireError} `invalid` / `invalid_transcript` for input `parseMessages` refuses;
 *   `unsupported` for an image inside a tool result. Never any other error.
 * @example
 * const completion = await openai.chat.completions.create({
 *   model: 'gpt-5',
 *   messages: toOpenAIChat(transcript, { system: 'You are terse.' }),
 * });
 */
export function toOpenAIChat(
  messages: readonly Message[],
  options: ToOpenAIChatOptions = {},
): OpenAIChatMessage[] {
  return converting(() => {
    const system = converterSystem(options);
    const transcript = converterMessages(messages);
    const out: OpenAIChatMessage[] = [];
    if (system !== undefined) out.push({ role: 'system', content: system });
    transcript.forEach((message, m) => {
      if (message.role === 'assistant') {
        out.push(assistantMessage(message, m));
        return;
      }
      const { results, rest, indexes } = splitToolResults(message.content);
      results.forEach((block, r) => {
        out.push(toolMessage(block, [m, 'content', indexes.results[r] ?? r]));
      });
      if (rest.length === 0 && results.length > 0) return;
      const only = rest.length === 1 ? rest[0] : undefined;
      out.push({
        role: 'user',
        content: only?.type === 'text' ? only.text : rest.map(userPart),
      });
    });
    return out;
  });
}
