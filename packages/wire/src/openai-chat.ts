import type { AssistantBlock, TextBlock, ToolResultBlock, UserBlock } from './blocks.js';
import {
  checkConverted,
  describe,
  expectArray,
  expectObject,
  expectString,
  fail,
  field,
  imageSourceFromUrl,
  type Path,
  splitToolResults,
} from './convert-util.js';
import { formatPath, WireError } from './errors.js';
import type { JsonValue } from './json.js';
import type { AssistantMessage, Message, UserMessage } from './message.js';

// Our own structural copies of the OpenAI Chat Completions shapes: `@x/wire` has no
// runtime dependency on `openai`. A type test checks they stay assignable both ways.

/** A text part of an OpenAI chat message. */
export interface OpenAIChatTextPart {
  type: 'text';
  text: string;
}

/** An image part of an OpenAI user message (an https URL or a base64 data URL). */
export interface OpenAIChatImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

/** A function call made by the assistant; `arguments` is the input as a JSON string. */
export interface OpenAIChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The system prompt (first, when `toOpenAIChat` is given one). */
export interface OpenAIChatSystemMessage {
  role: 'system';
  content: string | OpenAIChatTextPart[];
  name?: string;
}

/** A user message: text and images. */
export interface OpenAIChatUserMessage {
  role: 'user';
  content: string | Array<OpenAIChatTextPart | OpenAIChatImagePart>;
  name?: string;
}

/** An assistant message: text (or `null`) and tool calls. */
export interface OpenAIChatAssistantMessage {
  role: 'assistant';
  content?: string | Array<OpenAIChatTextPart | { type: 'refusal'; refusal: string }> | null;
  refusal?: string | null;
  tool_calls?: OpenAIChatToolCall[];
  name?: string;
}

/** The result of one tool call. */
export interface OpenAIChatToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string | OpenAIChatTextPart[];
}

/** A message as {@link toOpenAIChat} writes it; assignable to `openai`'s `ChatCompletionMessageParam`. */
export type OpenAIChatMessage =
  | OpenAIChatSystemMessage
  | OpenAIChatUserMessage
  | OpenAIChatAssistantMessage
  | OpenAIChatToolMessage;

/**
 * A message as {@link fromOpenAIChat} accepts it: everything `openai`'s
 * `ChatCompletionMessageParam` allows, so an `openai` array can be passed as it is. The
 * shapes our model cannot express (audio, files, custom tool calls, the legacy
 * `function` role) are typed here only so they reach the converter, which refuses them
 * with a `WireError` of code `unsupported`.
 */
export type OpenAIChatMessageParam =
  | OpenAIChatSystemMessage
  | { role: 'developer'; content: string | OpenAIChatTextPart[]; name?: string }
  | {
      role: 'user';
      content:
        | string
        | Array<
            | OpenAIChatTextPart
            | OpenAIChatImagePart
            | { type: 'input_audio'; input_audio: unknown }
            | { type: 'file'; file: unknown }
          >;
      name?: string;
    }
  | {
      role: 'assistant';
      content?: string | Array<OpenAIChatTextPart | { type: 'refusal'; refusal: string }> | null;
      refusal?: string | null;
      tool_calls?: Array<
        OpenAIChatToolCall | { id: string; type: 'custom'; custom: { name: string; input: string } }
      >;
      function_call?: { name: string; arguments: string } | null;
      audio?: { id: string } | null;
      name?: string;
    }
  | OpenAIChatToolMessage
  | { role: 'function'; content: string | null; name: string };

/** Options of {@link toOpenAIChat}. */
export interface ToOpenAIChatOptions {
  /** A system prompt, written as the first message (`role: 'system'`). Default: none. */
  system?: string;
}

/** What {@link fromOpenAIChat} returns. */
export interface FromOpenAIChatResult {
  /** The text of every `system` and `developer` message, joined by a blank line; absent when none. */
  system?: string;
  messages: Message[];
}

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
 * @throws {WireError} `unsupported` for an image inside a tool result.
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
  const out: OpenAIChatMessage[] = [];
  if (options.system !== undefined) out.push({ role: 'system', content: options.system });
  messages.forEach((message, m) => {
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
}

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
  // A refusal is what the model said; it is kept as text.
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
    let input: JsonValue;
    try {
      input = JSON.parse(args) as JsonValue;
    } catch (cause) {
      fail(
        'invalid',
        [...at, 'function', 'arguments'],
        `is not valid JSON (${(cause as Error).message}); the model's call cannot be replayed as a tool_use`,
        cause,
      );
    }
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
 * - A `refusal` becomes text; `name` and an image's `detail` are dropped.
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
  const input: unknown = messages;
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
