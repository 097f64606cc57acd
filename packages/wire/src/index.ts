/**
 * @packageDocumentation
 * The conversation model every `@x/*` package speaks: messages and content blocks in the
 * JSON shape of the Anthropic Messages API, their zod schemas, stream events, and
 * converters to and from OpenAI Chat Completions and the Vercel AI SDK.
 */

export * from './ai-sdk.js';
export * from './ai-sdk-from.js';
export * from './ai-sdk-prompt.js';
export * from './ai-sdk-types.js';
export * from './anthropic.js';
export * from './anthropic-types.js';
export * from './blocks.js';
export * from './errors.js';
export * from './helpers.js';
export * from './json.js';
export * from './message.js';
export * from './openai-chat.js';
export * from './openai-chat-from.js';
export * from './openai-chat-types.js';
export * from './parsed-messages.js';
export * from './stream-event.js';
