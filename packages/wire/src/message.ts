import { z } from 'zod';
import { AssistantBlockSchema, UserBlockSchema } from './blocks.js';
import { formatPath, WireError } from './errors.js';

// Anthropic accepts `content: "text"` as shorthand; we always hold an array of blocks.
function blocks<T extends z.ZodType>(block: T) {
  return z.union([
    z.string().transform((text) => [{ type: 'text' as const, text }]),
    z.array(block),
  ]);
}

/** A user turn: text, images and the results of the previous assistant turn's tool calls. */
export const UserMessageSchema = z.object({
  role: z.literal('user'),
  content: blocks(UserBlockSchema),
});

/** An assistant turn: text, tool calls and (provider) thinking. */
export const AssistantMessageSchema = z.object({
  role: z.literal('assistant'),
  content: blocks(AssistantBlockSchema),
});

/**
 * One message of a conversation, in the JSON shape of the Anthropic Messages API.
 * `content: "hi"` is accepted on the way in and held as `[{ type: 'text', text: 'hi' }]`.
 */
export const MessageSchema = z.discriminatedUnion('role', [
  UserMessageSchema,
  AssistantMessageSchema,
]);

export type UserMessage = z.infer<typeof UserMessageSchema>;
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;
export type Message = z.infer<typeof MessageSchema>;

function fail(root: string, error: z.ZodError): never {
  const issue = error.issues[0];
  const path = (issue?.path ?? []).map((key) => (typeof key === 'number' ? key : String(key)));
  throw new WireError('invalid', `${formatPath(root, path)}: ${issue?.message ?? 'invalid'}`, {
    path,
    cause: error,
  });
}

/**
 * Validates one message.
 *
 * @throws {WireError} `invalid`, naming the path of the first bad field.
 * @example
 * const message = parseMessage(JSON.parse(line));
 */
export function parseMessage(input: unknown): Message {
  const result = MessageSchema.safeParse(input);
  if (!result.success) fail('message', result.error);
  return result.data;
}

/**
 * Validates a transcript: every message, then the pairing of tool calls
 * (see {@link checkTranscript}).
 *
 * @throws {WireError} `invalid` naming the first bad field, or `invalid_transcript`.
 */
export function parseMessages(input: unknown): Message[] {
  const result = z.array(MessageSchema).safeParse(input);
  if (!result.success) fail('messages', result.error);
  checkTranscript(result.data);
  return result.data;
}

/**
 * Checks what makes a list of messages a transcript: each `tool_use` id appears once,
 * and each `tool_result` answers a `tool_use` of an earlier message, at most once.
 * A `tool_use` still waiting for its result (a suspended turn) is fine.
 *
 * @throws {WireError} `invalid_transcript`, with the path of the offending block.
 */
export function checkTranscript(messages: readonly Message[]): void {
  const pending = new Set<string>();
  const used = new Set<string>();
  const answered = new Set<string>();
  messages.forEach((message, m) => {
    message.content.forEach((block, b) => {
      const path = [m, 'content', b];
      if (block.type === 'tool_use') {
        if (used.has(block.id)) {
          throw new WireError(
            'invalid_transcript',
            `${formatPath('messages', path)}: tool_use id "${block.id}" is used twice`,
            { path },
          );
        }
        used.add(block.id);
        pending.add(block.id);
      } else if (block.type === 'tool_result') {
        const id = block.tool_use_id;
        if (!pending.has(id)) {
          const why = answered.has(id) ? 'is answered twice' : 'answers no earlier tool_use';
          throw new WireError(
            'invalid_transcript',
            `${formatPath('messages', path)}: tool_result for "${id}" ${why}`,
            { path },
          );
        }
        pending.delete(id);
        answered.add(id);
      }
    });
  });
}
