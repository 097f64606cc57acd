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
  ImageMediaType,
  ImageSource,
  TextBlock,
  ToolResultBlock,
} from './blocks.js';
import { converting, type Path, splitBase64DataUrl, splitToolResults } from './convert-util.js';
import { converterMessages, converterSystem } from './converter-input.js';
import { formatPath, WireError } from './errors.js';
import type { Message } from './message.js';

/**
 * How an image source travels in the AI SDK: inline base64 with its media type, or a URL
 * string. A base64 `data:` URL of one of the four image types is written inline, as the AI
 * SDK itself would send it. Any other URL must be absolute: the AI SDK reads a user image
 * string that is no URL as base64 bytes, and fails on a tool-result image URL it cannot parse.
 */
function imageData(
  source: ImageSource,
  path: Path,
): { data: string; mediaType: ImageMediaType } | { url: string } {
  if (source.type === 'base64') return { data: source.data, mediaType: source.media_type };
  const inline = splitBase64DataUrl(source.url);
  if (inline) return inline;
  if (!URL.canParse(source.url)) {
    throw new WireError(
      'unsupported',
      `${formatPath('messages', [...path, 'url'])}: "${source.url}" is not an absolute URL, which the AI SDK cannot send (it would read it as base64 data, or fail to parse it inside a tool result); use an absolute URL or a base64 source`,
      { path: [...path, 'url'] },
    );
  }
  return { url: source.url };
}

function resultContentPart(block: TextBlock | ImageBlock, path: Path): AiSdkToolResultContentPart {
  if (block.type === 'text') return { type: 'text', text: block.text };
  const image = imageData(block.source, [...path, 'source']);
  return 'url' in image
    ? { type: 'image-url', url: image.url }
    : { type: 'image-data', data: image.data, mediaType: image.mediaType };
}

function toolResultPart(
  block: ToolResultBlock,
  names: ReadonlyMap<string, string>,
  path: Path,
): AiSdkToolResultPart {
  const toolName = names.get(block.tool_use_id);
  if (toolName === undefined) {
    // checkTranscript already refused a result without an earlier call; kept as a guard.
    throw new WireError(
      'invalid_transcript',
      `${formatPath('messages', [...path, 'tool_use_id'])}: no earlier tool_use has id "${block.tool_use_id}", and the AI SDK needs its tool name; pass the whole transcript`,
      { path: [...path, 'tool_use_id'] },
    );
  }
  const { content } = block;
  const part: AiSdkToolResultPart = {
    type: 'tool-result',
    toolCallId: block.tool_use_id,
    toolName,
    output:
      content === undefined || typeof content === 'string'
        ? { type: block.is_error ? 'error-text' : 'text', value: content ?? '' }
        : {
            type: 'content',
            value: content.map((item, k) => resultContentPart(item, [...path, 'content', k])),
          },
  };
  if (block.is_error && Array.isArray(content)) {
    part.providerOptions = { [AI_SDK_WIRE_OPTIONS_KEY]: { isError: true } };
  }
  return part;
}

function imagePart(source: ImageSource, path: Path): AiSdkImagePart {
  const image = imageData(source, path);
  return 'url' in image
    ? { type: 'image', image: image.url }
    : { type: 'image', image: image.data, mediaType: image.mediaType };
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
 * - A `url` image whose URL is a base64 `data:` URL is written inline (base64 + `mediaType`).
 *
 * `messages` is checked first exactly as {@link parseMessages} checks it (schema, then the
 * pairing of tool calls), so malformed input is refused before anything is written.
 *
 * @throws {WireError} `invalid` / `invalid_transcript` for input `parseMessages` refuses
 *   (a tool_result whose tool_use is not in `messages`, too: the AI SDK needs its tool
 *   name); `unsupported` for an image URL that is not absolute. Never any other error.
 * @example
 * const result = await generateText({ model, messages: toModelMessages(transcript) });
 */
export function toModelMessages(
  messages: readonly Message[],
  options: ToModelMessagesOptions = {},
): AiSdkModelMessage[] {
  return converting(() => {
    const system = converterSystem(options);
    const transcript = converterMessages(messages);
    const out: AiSdkModelMessage[] = [];
    const names = new Map<string, string>();
    if (system !== undefined) out.push({ role: 'system', content: system });
    transcript.forEach((message, m) => {
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
          content: results.map((block, r) =>
            toolResultPart(block, names, [m, 'content', indexes.results[r] ?? r]),
          ),
        });
        if (rest.length === 0) return;
      }
      out.push({
        role: 'user',
        content: rest.map((block, r) =>
          block.type === 'text'
            ? { type: 'text', text: block.text }
            : imagePart(block.source, [m, 'content', indexes.rest[r] ?? r, 'source']),
        ),
      });
    });
    return out;
  });
}
