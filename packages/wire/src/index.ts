/**
 * @packageDocumentation
 * The conversation model every `@x/*` package speaks: messages and content blocks in the
 * JSON shape of the Anthropic Messages API, their zod schemas, stream events, and
 * converters to and from OpenAI Chat Completions and the Vercel AI SDK.
 */

export { toModelMessages } from './ai-sdk.js';
export { fromModelMessages } from './ai-sdk-from.js';
export {
  type AiSdkPrompt,
  type AiSdkPromptMessage,
  type ToModelPromptOptions,
  toModelPrompt,
} from './ai-sdk-prompt.js';
export {
  AI_SDK_WIRE_OPTIONS_KEY,
  type AiSdkImagePart,
  type AiSdkModelMessage,
  type AiSdkModelMessageParam,
  type AiSdkProviderOptions,
  type AiSdkReasoningPart,
  type AiSdkTextPart,
  type AiSdkToolCallPart,
  type AiSdkToolResultContentPart,
  type AiSdkToolResultOutput,
  type AiSdkToolResultPart,
  type FromModelMessagesResult,
  type ToModelMessagesOptions,
} from './ai-sdk-types.js';
export { fromAnthropicMessage, fromAnthropicMessages, toAnthropicMessages } from './anthropic.js';
export {
  ANTHROPIC_IMAGE_MEDIA_TYPES,
  type AnthropicImageBlockParam,
  type AnthropicImageMediaType,
  type AnthropicImageSource,
  type AnthropicMessageParam,
  type AnthropicMessageParamLike,
  type AnthropicResponseLike,
  type AnthropicToolResultBlockParam,
  type FromAnthropicMessagesResult,
} from './anthropic-types.js';
export {
  type AssistantBlock,
  AssistantBlockSchema,
  type Block,
  BlockSchema,
  type ImageBlock,
  ImageBlockSchema,
  type ImageMediaType,
  ImageMediaTypeSchema,
  type ImageSource,
  ImageSourceSchema,
  type RedactedThinkingBlock,
  RedactedThinkingBlockSchema,
  type TextBlock,
  TextBlockSchema,
  type ThinkingBlock,
  ThinkingBlockSchema,
  type ToolResultBlock,
  ToolResultBlockSchema,
  type ToolUseBlock,
  ToolUseBlockSchema,
  type UserBlock,
  UserBlockSchema,
} from './blocks.js';
export { WireError, type WireErrorCode } from './errors.js';
export {
  assistantMessage,
  textOf,
  toolResult,
  toolResults,
  toolUses,
  userMessage,
} from './helpers.js';
export { isJsonValue, type JsonValue, JsonValueSchema, MAX_JSON_DEPTH } from './json.js';
export {
  type AssistantMessage,
  AssistantMessageSchema,
  checkTranscript,
  type Message,
  MessageSchema,
  parseMessage,
  parseMessages,
  type UserMessage,
  UserMessageSchema,
} from './message.js';
export { toOpenAIChat } from './openai-chat.js';
export { fromOpenAIChat } from './openai-chat-from.js';
export type {
  FromOpenAIChatResult,
  OpenAIChatAssistantMessage,
  OpenAIChatImagePart,
  OpenAIChatMessage,
  OpenAIChatMessageParam,
  OpenAIChatSystemMessage,
  OpenAIChatTextPart,
  OpenAIChatToolCall,
  OpenAIChatToolMessage,
  OpenAIChatUserMessage,
  ToOpenAIChatOptions,
} from './openai-chat-types.js';
export { isParsedMessages } from './parsed-messages.js';
export {
  type StreamEvent,
  StreamEventSchema,
  type Todo,
  TodoSchema,
  type TurnEndReason,
  TurnEndReasonSchema,
} from './stream-event.js';
