import type {
  AiSdkImagePart,
  AiSdkModelMessage,
  AiSdkReasoningPart,
  AiSdkTextPart,
  AiSdkToolCallPart,
  AiSdkToolResultContentPart,
  AiSdkToolResultPart,
  ToModelMessagesOptions,
} from './ai-sdk-types.js';
import { AI_SDK_WIRE_OPTIONS_KEY } from './ai-sdk-types.js';
import type {
  AssistantBlock,
  ImageBlock,
  ImageSource,
  TextBlock,
  ToolResultBlock,
} from './blocks.js';
import { type Path, splitToolResults } from './convert-util.js';
import { formatPath, WireError } from './errors.js';
import type { Message } from './message.js';

function resultContentPart(block: TextBlock | ImageBlock): AiSdkToolResultContentPart {
  if (block.type === 'text') return { type: 'text', text: block.text };
  const { source } = block;
  return source.type === 'url'
    ? { type: 'image-url', url: source.url }
    : { type: 'image-data', data: source.data, mediaType: source.media_type };
}

function toolResultPart(block: ToolResultBlock, toolName: string): AiSdkToolResultPart {
  const { content } = block;
  const part: AiSdkToolResultPart = {
    type: 'tool-result',
    toolCallId: block.tool_use_id,
    toolName,
    output:
      content === undefined || typeof content === 'string'
        ? { type: block.is_error ? 'error-text' : 'text', value: content ?? '' }
        : { type: 'content', value: content.map(resultContentPart) },
  };
  if (block.is_error && Array.isArray(content)) {
    part.providerOptions = { [AI_SDK_WIRE_OPTIONS_KEY]: { isError: true } };
  }
  return part;
}

function imagePart(source: ImageSource, path: Path): AiSdkImagePart {
  if (source.type === 'base64')
    return { type: 'image', image: source.data, mediaType: source.media_type };
  // The AI SDK reads a string image as a URL when it parses as one and as base64 otherwise:
  // a relative or malformed URL would be sent as base64 bytes.
  if (!URL.canParse(source.url)) {
    throw new WireError(
      'unsupported',
      `${formatPath('messages', [...path, 'source', 'url'])}: "${source.url}" is not an absolute URL, and the AI SDK would read it as base64 data`,
      { path: [...path, 'source', 'url'] },
    );
  }
  return { type: 'image', image: source.url };
}

function assistantPart(
  block: AssistantBlock,
  names: Map<string, string>,
): AiSdkTextPart | AiSdkReasoningPart | AiSdkToolCallPart {
  if (block.type === 'text') return { type: 'text', text: block.text };
  if (block.type === 'thinking') {
    return {
      type: 'reasoning',
      text: block.thinking,
      providerOptions: { anthropic: { signature: block.signature } },
    };
  }
  if (block.type === 'redacted_thinking') {
    return {
      type: 'reasoning',
      text: '',
      providerOptions: { anthropic: { redactedData: block.data } },
    };
  }
  names.set(block.id, block.name);
  return { type: 'tool-call', toolCallId: block.id, toolName: block.name, input: block.input };
}

/**
 * Writes a transcript as Vercel AI SDK (ai@6) `ModelMessage`s, for `generateText` /
 * `streamText`'s `messages`.
 *
 * - `options.system` becomes the first message.
 * - A user message's `tool_result` blocks become one `role: 'tool'` message, placed before
 *   the rest of that user message; `toolName` is looked up from the earlier `tool_use`.
 * - `thinking` → `reasoning` with `providerOptions.anthropic.signature`; `redacted_thinking`
 *   → `reasoning` with empty text and `providerOptions.anthropic.redactedData`.
 * - `is_error` → `error-text` (string content) or `content` plus
 *   `providerOptions.xWire.isError` (block content).
 *
 * @throws {WireError} `invalid_transcript` for a tool_result whose tool_use is not in
 * `messages`; `unsupported` for an image URL that is not absolute.
 * @example
 * const result = await generateText({ model, messages: toModelMessages(transcript) });
 */
export function toModelMessages(
  messages: readonly Message[],
  options: ToModelMessagesOptions = {},
): AiSdkModelMessage[] {
  const out: AiSdkModelMessage[] = [];
  const names = new Map<string, string>();
  if (options.system !== undefined) out.push({ role: 'system', content: options.system });
  messages.forEach((message, m) => {
    if (message.role === 'assistant') {
      out.push({
        role: 'assistant',
        content: message.content.map((block) => assistantPart(block, names)),
      });
      return;
    }
    const { results, rest, indexes } = splitToolResults(message.content);
    if (results.length > 0) {
      out.push({
        role: 'tool',
        content: results.map((block, r) => {
          const name = names.get(block.tool_use_id);
          if (name === undefined) {
            const path = [m, 'content', indexes.results[r] ?? r, 'tool_use_id'];
            throw new WireError(
              'invalid_transcript',
              `${formatPath('messages', path)}: no earlier tool_use has id "${block.tool_use_id}", and the AI SDK needs its tool name; pass the whole transcript`,
              { path },
            );
          }
          return toolResultPart(block, name);
        }),
      });
      if (rest.length === 0) return;
    }
    out.push({
      role: 'user',
      content: rest.map((block, r) =>
        block.type === 'text'
          ? { type: 'text', text: block.text }
          : imagePart(block.source, [m, 'content', indexes.rest[r] ?? r]),
      ),
    });
  });
  return out;
}
