import {
  ANTHROPIC_IMAGE_MEDIA_TYPES,
  type AnthropicImageBlockParam,
  type AnthropicMessageParam,
  type AnthropicMessageParamLike,
  type AnthropicResponseLike,
  type AnthropicToolResultBlockParam,
  type FromAnthropicMessagesResult,
} from './anthropic-types.js';
import type { ImageBlock, TextBlock, UserBlock } from './blocks.js';
import { checkConverted, describe, type Path } from './convert-util.js';
import { converterMessages } from './converter-input.js';
import { formatPath, WireError } from './errors.js';
import {
  type AssistantMessage,
  type Message,
  parseMessage,
  type parseMessages,
} from './message.js';

function imageParam(block: ImageBlock): AnthropicImageBlockParam {
  const { source } = block;
  if (source.type === 'url') return { type: 'image', source: { type: 'url', url: source.url } };
  return {
    type: 'image',
    source: { type: 'base64', media_type: source.media_type, data: source.data },
  };
}

function userParam(
  block: UserBlock,
): TextBlock | AnthropicImageBlockParam | AnthropicToolResultBlockParam {
  if (block.type === 'image') return imageParam(block);
  if (block.type === 'text') return block;
  const { content, ...result } = block;
  if (content === undefined) return result;
  if (typeof content === 'string') return { ...result, content };
  return {
    ...result,
    content: content.map((inner) => (inner.type === 'image' ? imageParam(inner) : inner)),
  };
}

/**
 * Writes a transcript as the `@anthropic-ai/sdk`'s `MessageParam[]`, for
 * `client.messages.create({ messages })`. Our blocks are the Messages API's own shape (a
 * base64 image holds one of the four media types the API accepts,
 * {@link ANTHROPIC_IMAGE_MEDIA_TYPES}), so this only narrows the types, once the input is
 * checked as {@link parseMessages} checks it. The system prompt is `create`'s own `system`
 * parameter, so there is no option for it here.
 *
 * @throws {WireError} `invalid` / `invalid_transcript` for input `parseMessages` refuses (a
 * base64 image of another media type is `invalid`, with its path).
 * @example
 * const response = await client.messages.create({
 *   model, max_tokens: 1024, system, tools, messages: toAnthropicMessages(transcript),
 * });
 * transcript.push(fromAnthropicMessage(response));
 */
export function toAnthropicMessages(messages: readonly Message[]): AnthropicMessageParam[] {
  return converterMessages(messages).map((message): AnthropicMessageParam => {
    if (message.role === 'assistant') return { role: 'assistant', content: [...message.content] };
    return { role: 'user', content: message.content.map(userParam) };
  });
}

// The fields of each block type we keep; anything else on a block (cache_control,
// citations, caller, ...) is provider bookkeeping our model does not carry.
const kept: Record<string, readonly string[]> = {
  text: ['text'],
  image: ['source'],
  tool_use: ['id', 'name', 'input'],
  tool_result: ['tool_use_id', 'content', 'is_error'],
  thinking: ['thinking', 'signature'],
  redacted_thinking: ['data'],
};

function unsupported(root: string, path: Path, message: string): never {
  throw new WireError('unsupported', `${formatPath(root, path)}: ${message}`, { path });
}

function pickBlock(block: unknown, root: string, path: Path): unknown {
  if (typeof block !== 'object' || block === null) return block;
  const { type } = block as { type?: unknown };
  const keys = typeof type === 'string' ? kept[type] : undefined;
  if (keys === undefined) {
    if (typeof type !== 'string') return block; // the schema names what is wrong
    return unsupported(
      root,
      [...path, 'type'],
      `a "${type}" block (server tools, documents, search results, ...) has no counterpart in @x/wire`,
    );
  }
  const out: Record<string, unknown> = { type };
  for (const key of keys) {
    const value = (block as Record<string, unknown>)[key];
    if (value !== undefined && value !== null) out[key] = value;
  }
  if (type === 'image') {
    const source = out.source as { type?: unknown } | undefined;
    if (source?.type !== 'base64' && source?.type !== 'url' && typeof source?.type === 'string') {
      unsupported(
        root,
        [...path, 'source', 'type'],
        `a "${source.type}" image source has no counterpart in @x/wire; send the bytes or a URL`,
      );
    }
  }
  if (type === 'tool_result' && Array.isArray(out.content)) {
    out.content = out.content.map((inner, i) => {
      const innerType = (inner as { type?: unknown } | null)?.type;
      if (innerType !== 'text' && innerType !== 'image' && typeof innerType === 'string') {
        unsupported(
          root,
          [...path, 'content', i, 'type'],
          `a "${innerType}" block inside a tool result has no counterpart in @x/wire`,
        );
      }
      return pickBlock(inner, root, [...path, 'content', i]);
    });
  }
  return out;
}

function pickContent(content: unknown, root: string, path: Path): unknown {
  if (!Array.isArray(content)) return content;
  return content.map((block, b) => pickBlock(block, root, [...path, b]));
}

/** parseMessage, with its error re-rooted at `root` + `prefix` (its own root is `message`). */
function parseAt(input: unknown, root: string, prefix: Path): Message {
  try {
    return parseMessage(input);
  } catch (error) {
    if (!WireError.is(error)) throw error;
    const path = [...prefix, ...error.path];
    const detail = error.message.replace(/^\[@x\/wire\] message[^:]*: /, '');
    throw new WireError(error.code, `${formatPath(root, path)}: ${detail}`, {
      path,
      cause: error,
    });
  }
}

/**
 * Reads a response of the `@anthropic-ai/sdk` (`messages.create`, or a stream's
 * `finalMessage()`) as an assistant message, validated like `parseMessage`. Text,
 * thinking, redacted thinking and tool use are kept (thinking byte for byte); the
 * response's bookkeeping (`id`, `usage`, `stop_reason`, citations, ...) is not.
 *
 * @throws {WireError} `unsupported` for a block our model has no counterpart for (server
 * tool use and its results, container uploads), `invalid` for a malformed one.
 * @example
 * const response = await client.messages.create({ model, max_tokens, messages: toAnthropicMessages(transcript) });
 * const reply = fromAnthropicMessage(response);
 */
export function fromAnthropicMessage(response: AnthropicResponseLike): AssistantMessage {
  const role = (response as { role?: unknown } | null)?.role;
  if (role !== 'assistant') {
    throw new WireError(
      'invalid',
      `response.role: expected 'assistant', received ${JSON.stringify(role) ?? describe(role)}`,
      { path: ['role'] },
    );
  }
  const content = pickContent(response.content, 'response', ['content']);
  return parseAt({ role, content }, 'response', []) as AssistantMessage;
}

function systemText(content: unknown, path: Path): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) {
    throw new WireError(
      'invalid',
      `${formatPath('messages', path)}: expected a string or text blocks, received ${describe(content)}`,
      { path },
    );
  }
  return content
    .map((block, b) => {
      const text = (block as { type?: unknown; text?: unknown } | null) ?? {};
      if (text.type !== 'text' || typeof text.text !== 'string') {
        throw new WireError(
          'invalid',
          `${formatPath('messages', [...path, b])}: a system message holds text blocks only`,
          { path: [...path, b] },
        );
      }
      return text.text;
    })
    .join('');
}

/**
 * Reads a transcript kept as the `@anthropic-ai/sdk`'s `MessageParam[]`. System messages
 * are collected into `system` (joined by a blank line); string content becomes a text
 * block; fields our model does not carry (`cache_control`, `citations`, ...) are dropped.
 * The result is validated like `parseMessages`, pairing of tool calls included.
 *
 * @throws {WireError} `unsupported` for a block our model has no counterpart for
 * (documents, search results, server tools, file image sources), else as `parseMessages`.
 * @example
 * const { system, messages } = fromAnthropicMessages(savedParams);
 */
export function fromAnthropicMessages(
  params: readonly AnthropicMessageParamLike[],
): FromAnthropicMessagesResult {
  if (!Array.isArray(params)) {
    throw new WireError('invalid', `messages: expected an array, received ${describe(params)}`);
  }
  const system: string[] = [];
  const messages: Message[] = [];
  params.forEach((param, i) => {
    const role = (param as { role?: unknown } | null)?.role;
    const content = (param as { content?: unknown } | null)?.content;
    if (role === 'system') {
      system.push(systemText(content, [i, 'content']));
      return;
    }
    const picked = pickContent(content, 'messages', [i, 'content']);
    messages.push(parseAt({ role, content: picked }, 'messages', [i]));
  });
  checkConverted(messages);
  return system.length > 0 ? { system: system.join('\n\n'), messages } : { messages };
}
