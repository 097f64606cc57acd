import type { JsonValue } from './json.js';
import type { Message } from './message.js';

// Our own structural copies of the Vercel AI SDK (ai@6) `ModelMessage` shapes: `@x/wire`
// has no runtime dependency on `ai`. A type test checks they stay assignable both ways.

/** Provider-specific data on a part, keyed by provider (`anthropic`, `openai`, ...). */
export type AiSdkProviderOptions = Record<string, Record<string, JsonValue>>;

/** Text. */
export interface AiSdkTextPart {
  type: 'text';
  text: string;
  providerOptions?: AiSdkProviderOptions;
}

/** An image: base64 `string` with `mediaType`, or a URL string. */
export interface AiSdkImagePart {
  type: 'image';
  image: string;
  mediaType?: string;
  providerOptions?: AiSdkProviderOptions;
}

/**
 * Reasoning. Anthropic thinking carries `providerOptions.anthropic.signature`; redacted
 * thinking has empty text and `providerOptions.anthropic.redactedData` (how
 * `@ai-sdk/anthropic` reads and writes them).
 */
export interface AiSdkReasoningPart {
  type: 'reasoning';
  text: string;
  providerOptions?: AiSdkProviderOptions;
}

/** A tool call. */
export interface AiSdkToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: JsonValue;
  providerOptions?: AiSdkProviderOptions;
}

/** One item of a `content` tool result. */
export type AiSdkToolResultContentPart =
  | { type: 'text'; text: string }
  | { type: 'image-data'; data: string; mediaType: string }
  | { type: 'image-url'; url: string };

/** What a tool returned, as {@link toModelMessages} writes it. */
export type AiSdkToolResultOutput =
  | { type: 'text'; value: string }
  | { type: 'error-text'; value: string }
  | { type: 'content'; value: AiSdkToolResultContentPart[] };

/** The result of one tool call. */
export interface AiSdkToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: AiSdkToolResultOutput;
  providerOptions?: AiSdkProviderOptions;
}

/** A message as {@link toModelMessages} writes it; assignable to `ai`'s `ModelMessage`. */
export type AiSdkModelMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: Array<AiSdkTextPart | AiSdkImagePart> }
  | { role: 'assistant'; content: Array<AiSdkTextPart | AiSdkReasoningPart | AiSdkToolCallPart> }
  | { role: 'tool'; content: AiSdkToolResultPart[] };

type DataContent = string | Uint8Array | ArrayBuffer | URL;
type LooseProviderOptions = Record<string, Record<string, unknown>>;
type Loose<T> = T & { providerOptions?: LooseProviderOptions };

/**
 * A message as {@link fromModelMessages} accepts it: what `ai`'s `ModelMessage` allows, so
 * an `ai` array can be passed as it is. Parts our model cannot express reach the
 * converter, which refuses them (`unsupported`) or drops them where the rules say so.
 */
export type AiSdkModelMessageParam =
  | Loose<{ role: 'system'; content: string }>
  | Loose<{
      role: 'user';
      content:
        | string
        | Array<
            | Loose<{ type: 'text'; text: string }>
            | Loose<{ type: 'image'; image: DataContent; mediaType?: string }>
            | Loose<{ type: 'file'; data: DataContent; mediaType: string; filename?: string }>
          >;
    }>
  | Loose<{
      role: 'assistant';
      content:
        | string
        | Array<
            | Loose<{ type: 'text'; text: string }>
            | Loose<{ type: 'reasoning'; text: string }>
            | Loose<{
                type: 'tool-call';
                toolCallId: string;
                toolName: string;
                input: unknown;
                providerExecuted?: boolean;
              }>
            | Loose<{ type: 'file'; data: DataContent; mediaType: string; filename?: string }>
            | Loose<{ type: 'tool-result'; toolCallId: string; toolName: string; output: unknown }>
            | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
          >;
    }>
  | Loose<{
      role: 'tool';
      content: Array<
        | Loose<{ type: 'tool-result'; toolCallId: string; toolName: string; output: unknown }>
        | { type: 'tool-approval-response'; approvalId: string; approved: boolean; reason?: string }
      >;
    }>;

/** Options of {@link toModelMessages}. */
export interface ToModelMessagesOptions {
  /** A system prompt, written as the first message (`role: 'system'`). Default: none. */
  system?: string;
}

/** What {@link fromModelMessages} returns. */
export interface FromModelMessagesResult {
  /** The text of every `system` message, joined by a blank line; absent when none. */
  system?: string;
  messages: Message[];
}

/**
 * Where an error flag travels when the result is a list of blocks: the AI SDK has
 * `error-text` and `error-json` but no "error content". `error-json` would make the
 * provider send the blocks as a JSON string (changing what the model sees), so the
 * blocks stay `content` and the flag rides in provider options no provider reads.
 */
export const AI_SDK_WIRE_OPTIONS_KEY = 'xWire';
