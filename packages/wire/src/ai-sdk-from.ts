import { Buffer } from 'node:buffer';
import {
  AI_SDK_WIRE_OPTIONS_KEY,
  type AiSdkModelMessageParam,
  type FromModelMessagesResult,
} from './ai-sdk-types.js';
import type {
  AssistantBlock,
  ImageBlock,
  ImageSource,
  TextBlock,
  ToolResultBlock,
  UserBlock,
} from './blocks.js';
import {
  checkConverted,
  converting,
  describe,
  expectArray,
  expectJson,
  expectObject,
  expectString,
  fail,
  field,
  imageMediaType,
  imageSourceFromUrl,
  type Path,
} from './convert-util.js';
import type { Message, UserMessage } from './message.js';

// ---- from the AI SDK --------------------------------------------------------------

function typeName(value: unknown): string {
  return JSON.stringify(value) ?? describe(value);
}

function providerOption(part: object, path: Path, provider: string, key: string): unknown {
  const options = field(part, 'providerOptions', path);
  if (typeof options !== 'object' || options === null) return undefined;
  const scoped = (options as Record<string, unknown>)[provider];
  if (typeof scoped !== 'object' || scoped === null) return undefined;
  return (scoped as Record<string, unknown>)[key];
}

/** Binary or string image data → our image source. */
function imageSource(data: unknown, mediaType: unknown, path: Path, dataKey: string): ImageSource {
  let base64: string;
  if (data instanceof URL) return imageSourceFromUrl(data.href);
  if (typeof data === 'string') {
    // Base64 never holds ':'; the AI SDK too reads a string that parses as a URL as one.
    if (data.includes(':') && URL.canParse(data)) return imageSourceFromUrl(data);
    base64 = data;
  } else if (data instanceof Uint8Array) {
    base64 = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  } else if (data instanceof ArrayBuffer) {
    base64 = Buffer.from(data).toString('base64');
  } else {
    return fail(
      'invalid',
      [...path, dataKey],
      `expected a base64 string, a URL, a Uint8Array or an ArrayBuffer, received ${describe(data)}`,
    );
  }
  return {
    type: 'base64',
    media_type: imageMediaType(mediaType, base64, [...path, 'mediaType']),
    data: base64,
  };
}

function userBlocks(content: unknown, path: Path): UserBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return expectArray(content, path).map((part, p): UserBlock => {
    const at = [...path, p];
    const object = expectObject(part, at);
    const type = field(object, 'type', at);
    switch (type) {
      case 'text':
        return { type: 'text', text: expectString(field(object, 'text', at), [...at, 'text']) };
      case 'image':
        return {
          type: 'image',
          source: imageSource(
            field(object, 'image', at),
            field(object, 'mediaType', at),
            at,
            'image',
          ),
        };
      case 'file': {
        const mediaType = field(object, 'mediaType', at);
        if (typeof mediaType === 'string' && mediaType.startsWith('image/')) {
          return {
            type: 'image',
            source: imageSource(field(object, 'data', at), mediaType, at, 'data'),
          };
        }
        return fail(
          'unsupported',
          [...at, 'mediaType'],
          `a file of type ${typeName(mediaType)} cannot be expressed as a @x/wire block; only images can`,
        );
      }
      default:
        return fail(
          'invalid',
          [...at, 'type'],
          `expected 'text', 'image' or 'file', received ${typeName(type)}`,
        );
    }
  });
}

function assistantBlocks(content: unknown, path: Path): AssistantBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const blocks: AssistantBlock[] = [];
  expectArray(content, path).forEach((part, p) => {
    const at = [...path, p];
    const object = expectObject(part, at);
    const type = field(object, 'type', at);
    switch (type) {
      case 'text':
        blocks.push({
          type: 'text',
          text: expectString(field(object, 'text', at), [...at, 'text']),
        });
        return;
      case 'reasoning': {
        const text = expectString(field(object, 'text', at), [...at, 'text']);
        const signature = providerOption(object, at, 'anthropic', 'signature');
        const redacted = providerOption(object, at, 'anthropic', 'redactedData');
        if (typeof signature === 'string')
          blocks.push({ type: 'thinking', thinking: text, signature });
        else if (typeof redacted === 'string')
          blocks.push({ type: 'redacted_thinking', data: redacted });
        // Reasoning without an Anthropic signature (another provider's, or a summary) is
        // model-private state no Anthropic-shaped turn can send back: dropped.
        return;
      }
      case 'tool-call': {
        if (field(object, 'providerExecuted', at) === true) {
          fail(
            'unsupported',
            [...at, 'providerExecuted'],
            'a provider-executed tool call (a server tool) cannot be expressed as a @x/wire tool_use',
          );
        }
        const input = expectJson(field(object, 'input', at), [...at, 'input']);
        blocks.push({
          type: 'tool_use',
          id: expectString(field(object, 'toolCallId', at), [...at, 'toolCallId'], {
            nonEmpty: true,
          }),
          name: expectString(field(object, 'toolName', at), [...at, 'toolName'], {
            nonEmpty: true,
          }),
          input,
        });
        return;
      }
      case 'tool-approval-request':
        // The AI SDK's own approval bookkeeping; no provider sends it to the model.
        return;
      case 'file':
      case 'tool-result':
        fail(
          'unsupported',
          [...at, 'type'],
          `an assistant '${type}' part cannot be expressed as a @x/wire block`,
        );
        return;
      default:
        fail(
          'invalid',
          [...at, 'type'],
          `expected 'text', 'reasoning' or 'tool-call', received ${typeName(type)}`,
        );
    }
  });
  return blocks;
}

function resultBlocks(value: unknown, path: Path): Array<TextBlock | ImageBlock> {
  return expectArray(value, path).map((part, p): TextBlock | ImageBlock => {
    const at = [...path, p];
    const object = expectObject(part, at);
    const type = field(object, 'type', at);
    switch (type) {
      case 'text':
        return { type: 'text', text: expectString(field(object, 'text', at), [...at, 'text']) };
      case 'image-url':
        return {
          type: 'image',
          source: imageSourceFromUrl(expectString(field(object, 'url', at), [...at, 'url'])),
        };
      case 'image-data':
      case 'media':
      case 'file-data': {
        const mediaType = field(object, 'mediaType', at);
        if (typeof mediaType !== 'string' || !mediaType.startsWith('image/')) {
          return fail(
            'unsupported',
            [...at, 'mediaType'],
            `a tool result part of type ${typeName(mediaType)} cannot be expressed as a @x/wire block; only images can`,
          );
        }
        const data = expectString(field(object, 'data', at), [...at, 'data']);
        return {
          type: 'image',
          source: {
            type: 'base64',
            media_type: imageMediaType(mediaType, data, [...at, 'mediaType']),
            data,
          },
        };
      }
      default:
        return fail(
          'unsupported',
          [...at, 'type'],
          `a tool result part '${String(type)}' cannot be expressed as a @x/wire block`,
        );
    }
  });
}

function toolResult(object: object, path: Path): ToolResultBlock {
  const id = expectString(field(object, 'toolCallId', path), [...path, 'toolCallId'], {
    nonEmpty: true,
  });
  const output = expectObject(field(object, 'output', path), [...path, 'output']);
  const at = [...path, 'output'];
  const type = field(output, 'type', at);
  const block: ToolResultBlock = { type: 'tool_result', tool_use_id: id };
  switch (type) {
    case 'text':
    case 'error-text':
      block.content = expectString(field(output, 'value', at), [...at, 'value']);
      break;
    case 'json':
    case 'error-json': {
      // What @ai-sdk/anthropic sends the model for a JSON result.
      block.content = JSON.stringify(expectJson(field(output, 'value', at), [...at, 'value']));
      break;
    }
    case 'execution-denied': {
      const reason = field(output, 'reason', at);
      block.content =
        reason === undefined ? 'Tool execution denied.' : expectString(reason, [...at, 'reason']);
      break;
    }
    case 'content':
      block.content = resultBlocks(field(output, 'value', at), [...at, 'value']);
      if (providerOption(object, path, AI_SDK_WIRE_OPTIONS_KEY, 'isError') === true)
        block.is_error = true;
      break;
    default:
      return fail(
        'invalid',
        [...at, 'type'],
        `expected 'text', 'json', 'error-text', 'error-json', 'execution-denied' or 'content', received ${typeName(type)}`,
      );
  }
  if (type === 'error-text' || type === 'error-json') block.is_error = true;
  return block;
}

function systemText(content: unknown, path: Path): string {
  return expectString(content, path);
}

/**
 * Reads Vercel AI SDK (ai@6) `ModelMessage`s into a transcript.
 *
 * - `system` messages are collected into `system` (joined by a blank line).
 * - `role: 'tool'` messages become `tool_result` blocks; consecutive tool messages and a
 *   user message right after them merge into one user message (results first).
 * - `reasoning` with `providerOptions.anthropic.signature` → `thinking`; with
 *   `redactedData` → `redacted_thinking`; any other reasoning is dropped.
 * - `json` / `error-json` results become their JSON text; `execution-denied` becomes its
 *   reason (or "Tool execution denied."), as `@ai-sdk/anthropic` sends them.
 * - Binary image data becomes base64; a missing `mediaType` is read from the bytes.
 * - Tool approval parts and other providers' `providerOptions` are dropped.
 *
 * The result is checked with {@link checkTranscript}.
 *
 * @throws {WireError} `invalid` (bad shape), `unsupported` (non-image files,
 * provider-executed tools), `invalid_transcript` (a result answering no earlier call).
 * @example
 * const { system, messages } = fromModelMessages(result.response.messages);
 */
export function fromModelMessages(
  messages: readonly AiSdkModelMessageParam[],
): FromModelMessagesResult {
  return converting(() => readModelMessages(messages));
}

function readModelMessages(input: unknown): FromModelMessagesResult {
  const system: string[] = [];
  const out: Message[] = [];
  let open: UserMessage | undefined;
  expectArray(input, []).forEach((item, i) => {
    const object = expectObject(item, [i]);
    const role = field(object, 'role', [i]);
    const content = field(object, 'content', [i]);
    switch (role) {
      case 'system':
        system.push(systemText(content, [i, 'content']));
        return;
      case 'user': {
        const blocks = userBlocks(content, [i, 'content']);
        if (open) open.content.push(...blocks);
        else out.push({ role: 'user', content: blocks });
        open = undefined;
        return;
      }
      case 'tool': {
        const results: ToolResultBlock[] = [];
        expectArray(content, [i, 'content']).forEach((part, p) => {
          const at = [i, 'content', p];
          const object = expectObject(part, at);
          const type = field(object, 'type', at);
          if (type === 'tool-approval-response') return;
          if (type !== 'tool-result')
            fail('invalid', [...at, 'type'], `expected 'tool-result', received ${typeName(type)}`);
          results.push(toolResult(object, at));
        });
        if (results.length === 0) return;
        if (open) open.content.push(...results);
        else {
          open = { role: 'user', content: results };
          out.push(open);
        }
        return;
      }
      case 'assistant':
        out.push({ role: 'assistant', content: assistantBlocks(content, [i, 'content']) });
        open = undefined;
        return;
      default:
        fail(
          'invalid',
          [i, 'role'],
          `expected 'system', 'user', 'assistant' or 'tool', received ${typeName(role)}`,
        );
    }
  });
  checkConverted(out);
  return system.length > 0 ? { system: system.join('\n\n'), messages: out } : { messages: out };
}
