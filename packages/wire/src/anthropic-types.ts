import type { AssistantBlock, TextBlock } from './blocks.js';
import type { Message } from './message.js';

// Our own structural copies of the `@anthropic-ai/sdk` shapes: `@x/wire` has no runtime
// dependency on the SDK. A type test checks they stay assignable to the SDK's types.

/** The image types the Anthropic Messages API accepts as base64 data. */
export const ANTHROPIC_IMAGE_MEDIA_TYPES = [
  'image/jpeg',
  'image/png',
  'image/gif',
  'image/webp',
] as const;

/** One of {@link ANTHROPIC_IMAGE_MEDIA_TYPES}. */
export type AnthropicImageMediaType = (typeof ANTHROPIC_IMAGE_MEDIA_TYPES)[number];

/** An image source as the SDK's `ImageBlockParam` takes it. */
export type AnthropicImageSource =
  | { type: 'base64'; media_type: AnthropicImageMediaType; data: string }
  | { type: 'url'; url: string };

/** An image block as the SDK takes it. */
export interface AnthropicImageBlockParam {
  type: 'image';
  source: AnthropicImageSource;
}

/** A tool result as the SDK takes it. */
export interface AnthropicToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlock | AnthropicImageBlockParam>;
  is_error?: boolean;
}

/**
 * A message as {@link toAnthropicMessages} writes it: assignable to the SDK's
 * `MessageParam`, so an array of them is `messages.create`'s `messages` as it is.
 */
export type AnthropicMessageParam =
  | {
      role: 'user';
      content: Array<TextBlock | AnthropicImageBlockParam | AnthropicToolResultBlockParam>;
    }
  | { role: 'assistant'; content: AssistantBlock[] };

/**
 * What {@link fromAnthropicMessage} accepts: the SDK's response `Message` (from
 * `messages.create` or a stream's `finalMessage()`) as it is. Blocks are checked at run time.
 */
export interface AnthropicResponseLike {
  role: 'assistant';
  content: ReadonlyArray<{ readonly type: string }>;
}

/**
 * What {@link fromAnthropicMessages} accepts: the SDK's `MessageParam` (user, assistant and
 * system messages, string or block content) as it is. Blocks are checked at run time.
 */
export interface AnthropicMessageParamLike {
  role: 'user' | 'assistant' | 'system';
  content: string | ReadonlyArray<{ readonly type: string }>;
}

/** What {@link fromAnthropicMessages} returns. */
export interface FromAnthropicMessagesResult {
  /** The text of every `system` message, joined by a blank line; absent when none. */
  system?: string;
  messages: Message[];
}
