import { z } from 'zod';
import { JsonValueSchema } from './json.js';

/** Plain text. */
export const TextBlockSchema = z.object({
  type: z.literal('text'),
  text: z.string(),
});

/**
 * The media types of inline images: exactly the four the Anthropic Messages API accepts, so
 * that every accepted image reaches a provider and comes back through every converter as it was.
 */
export const ImageMediaTypeSchema = z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** See {@link ImageMediaTypeSchema}. */
export type ImageMediaType = z.infer<typeof ImageMediaTypeSchema>;

/** Where an image's bytes are: inline base64 (one of {@link ImageMediaTypeSchema}), or a URL. */
export const ImageSourceSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('base64'),
    media_type: ImageMediaTypeSchema,
    data: z.string(),
  }),
  z.object({ type: z.literal('url'), url: z.string() }),
]);

/** An image, in a user message or inside a tool result. */
export const ImageBlockSchema = z.object({
  type: z.literal('image'),
  source: ImageSourceSchema,
});

/** The model calls a tool. `id` pairs it with exactly one later `tool_result`. */
export const ToolUseBlockSchema = z.object({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: JsonValueSchema,
});

/** The answer to one `tool_use`, carried in the next user message. */
export const ToolResultBlockSchema = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z
    .union([z.string(), z.array(z.discriminatedUnion('type', [TextBlockSchema, ImageBlockSchema]))])
    .optional(),
  is_error: z.boolean().optional(),
});

/**
 * The model's visible reasoning. `thinking` and `signature` are kept byte for byte: a
 * provider rejects a resumed turn whose thinking was altered.
 */
export const ThinkingBlockSchema = z.object({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string(),
});

/** Reasoning the provider encrypted; `data` is sent back unchanged. */
export const RedactedThinkingBlockSchema = z.object({
  type: z.literal('redacted_thinking'),
  data: z.string(),
});

/** Blocks a user message may hold. */
export const UserBlockSchema = z.discriminatedUnion('type', [
  TextBlockSchema,
  ImageBlockSchema,
  ToolResultBlockSchema,
]);

/** Blocks an assistant message may hold. */
export const AssistantBlockSchema = z.discriminatedUnion('type', [
  TextBlockSchema,
  ToolUseBlockSchema,
  ThinkingBlockSchema,
  RedactedThinkingBlockSchema,
]);

/** Any content block. */
export const BlockSchema = z.discriminatedUnion('type', [
  TextBlockSchema,
  ImageBlockSchema,
  ToolUseBlockSchema,
  ToolResultBlockSchema,
  ThinkingBlockSchema,
  RedactedThinkingBlockSchema,
]);

export type TextBlock = z.infer<typeof TextBlockSchema>;
export type ImageSource = z.infer<typeof ImageSourceSchema>;
export type ImageBlock = z.infer<typeof ImageBlockSchema>;
export type ToolUseBlock = z.infer<typeof ToolUseBlockSchema>;
export type ToolResultBlock = z.infer<typeof ToolResultBlockSchema>;
export type ThinkingBlock = z.infer<typeof ThinkingBlockSchema>;
export type RedactedThinkingBlock = z.infer<typeof RedactedThinkingBlockSchema>;
export type UserBlock = z.infer<typeof UserBlockSchema>;
export type AssistantBlock = z.infer<typeof AssistantBlockSchema>;
export type Block = z.infer<typeof BlockSchema>;
