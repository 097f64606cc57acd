import type { AssistantBlock, TextBlock, ToolResultBlock, UserBlock } from './blocks.js';
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
  imageSourceFromUrl,
  type Path,
} from './convert-util.js';
import type { Message, UserMessage } from './message.js';

import type { FromOpenAIChatResult, OpenAIChatMessageParam } from './openai-chat-types.js';

// ---- from OpenAI chat -------------------------------------------------------------

function textParts(content: unknown, path: Path, allowRefusal: boolean): TextBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return expectArray(content, path).map((part, p): TextBlock => {
    const at = [...path, p];
    const object = expectObject(part, at);
    const type = field(object, 'type', at);
    if (type === 'text')
      return { type: 'text', text: expectString(field(object, 'text', at), [...at, 'text']) };
    if (allowRefusal && type === 'refusal') {
      return { type: 'text', text: expectString(field(object, 'refusal', at), [...at, 'refusal']) };
    }
    return fail(
      'invalid',
      [...at, 'type'],
      `expected 'text'${allowRefusal ? " or 'refusal'" : ''}, received ${JSON.stringify(type) ?? describe(type)}`,
    );
  });
}

function systemText(content: unknown, path: Path): string {
  return textParts(content, path, false)
    .map((block) => block.text)
    .join('');
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
      case 'image_url': {
        const image = expectObject(field(object, 'image_url', at), [...at, 'image_url']);
        const url = expectString(field(image, 'url', [...at, 'image_url']), [
          ...at,
          'image_url',
          'url',
        ]);
        // `detail` is an OpenAI rendering hint with no Anthropic counterpart: dropped.
        return { type: 'image', source: imageSourceFromUrl(url) };
      }
      case 'input_audio':
      case 'file':
        return fail(
          'unsupported',
          [...at, 'type'],
          `a '${type}' part cannot be expressed as a @x/wire block; remove it or convert it to text first`,
        );
      default:
        return fail(
          'invalid',
          [...at, 'type'],
          `expected 'text' or 'image_url', received ${JSON.stringify(type) ?? describe(type)}`,
        );
    }
  });
}

function assistantBlocks(object: object, path: Path): AssistantBlock[] {
  for (const key of ['function_call', 'audio'] as const) {
    const value = field(object, key, path);
    if (value !== undefined && value !== null) {
      fail(
        'unsupported',
        [...path, key],
        `an assistant '${key}' cannot be expressed as a @x/wire block`,
      );
    }
  }
  const blocks: AssistantBlock[] = [];
  const content = field(object, 'content', path);
  if (content !== undefined && content !== null)
    blocks.push(...textParts(content, [...path, 'content'], true));
  // A refusal is what the model said; it is kept as text. `annotations` (citations on a
  // response message) are not read: our text blocks have nowhere to keep them.
  const refusal = field(object, 'refusal', path);
  if (refusal !== undefined && refusal !== null) {
    blocks.push({ type: 'text', text: expectString(refusal, [...path, 'refusal']) });
  }
  const calls = field(object, 'tool_calls', path);
  if (calls === undefined || calls === null) return blocks;
  expectArray(calls, [...path, 'tool_calls']).forEach((call, c) => {
    const at = [...path, 'tool_calls', c];
    const object = expectObject(call, at);
    const type = field(object, 'type', at);
    if (type === 'custom')
      fail(
        'unsupported',
        [...at, 'type'],
        'a custom tool call (free-form input) cannot be expressed as a @x/wire tool_use',
      );
    if (type !== 'function')
      fail(
        'invalid',
        [...at, 'type'],
        `expected 'function', received ${JSON.stringify(type) ?? describe(type)}`,
      );
    const id = expectString(field(object, 'id', at), [...at, 'id'], { nonEmpty: true });
    const fn = expectObject(field(object, 'function', at), [...at, 'function']);
    const name = expectString(field(fn, 'name', [...at, 'function']), [...at, 'function', 'name'], {
      nonEmpty: true,
    });
    const args = expectString(field(fn, 'arguments', [...at, 'function']), [
      ...at,
      'function',
      'arguments',
    ]);
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch (cause) {
      fail(
        'invalid',
        [...at, 'function', 'arguments'],
        `is not valid JSON (${(cause as Error).message}); the model's call cannot be replayed as a tool_use`,
        cause,
      );
    }
    // JSON.parse reads any depth; the input must also meet the limit every other entry point keeps.
    const input = expectJson(parsed, [...at, 'function', 'arguments']);
    blocks.push({ type: 'tool_use', id, name, input });
  });
  return blocks;
}

/**
 * Reads OpenAI Chat Completions messages into a transcript.
 *
 * - `system` and `developer` messages are collected into `system` (joined by a blank
 *   line), wherever they stand.
 * - `role: 'tool'` messages become `tool_result` blocks. Consecutive tool messages, and
 *   a user message right after them, merge into one user message (results first).
 * - `tool_calls[].function.arguments` is parsed as JSON.
 * - A `refusal` becomes text; `name`, an image's `detail` and a response's `annotations`
 *   (citations) are dropped.
 *
 * The result is checked with {@link checkTranscript}.
 *
 * @throws {WireError} `invalid` (bad shape, arguments that are not JSON),
 * `unsupported` (audio, files, custom tool calls, `role: 'function'`), or
 * `invalid_transcript` (a tool message answering no earlier tool call).
 * @example
 * const { system, messages } = fromOpenAIChat(savedChat);
 */
export function fromOpenAIChat(messages: readonly OpenAIChatMessageParam[]): FromOpenAIChatResult {
  return converting(() => readOpenAIChat(messages));
}

function readOpenAIChat(input: unknown): FromOpenAIChatResult {
  const system: string[] = [];
  const out: Message[] = [];
  // The user message that tool messages opened and the next user message may join.
  let open: UserMessage | undefined;
  expectArray(input, []).forEach((item, i) => {
    const object = expectObject(item, [i]);
    const role = field(object, 'role', [i]);
    switch (role) {
      case 'system':
      case 'developer':
        system.push(systemText(field(object, 'content', [i]), [i, 'content']));
        return;
      case 'user': {
        const blocks = userBlocks(field(object, 'content', [i]), [i, 'content']);
        if (open) open.content.push(...blocks);
        else out.push({ role: 'user', content: blocks });
        open = undefined;
        return;
      }
      case 'tool': {
        const content = field(object, 'content', [i]);
        const block: ToolResultBlock = {
          type: 'tool_result',
          tool_use_id: expectString(field(object, 'tool_call_id', [i]), [i, 'tool_call_id'], {
            nonEmpty: true,
          }),
          content:
            typeof content === 'string' ? content : textParts(content, [i, 'content'], false),
        };
        if (open) open.content.push(block);
        else {
          open = { role: 'user', content: [block] };
          out.push(open);
        }
        return;
      }
      case 'assistant':
        out.push({ role: 'assistant', content: assistantBlocks(object, [i]) });
        open = undefined;
        return;
      case 'function':
        fail(
          'unsupported',
          [i, 'role'],
          "the legacy 'function' role has no tool call id to pair with; convert it to tool_calls and tool messages first",
        );
        return;
      default:
        fail(
          'invalid',
          [i, 'role'],
          `expected 'system', 'developer', 'user', 'assistant' or 'tool', received ${JSON.stringify(role) ?? describe(role)}`,
        );
    }
  });
  checkConverted(out);
  return system.length > 0 ? { system: system.join('\n\n'), messages: out } : { messages: out };
}
