import type { Message } from './message.js';

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
