import { z } from 'zod';
import { AssistantBlockSchema, UserBlockSchema } from './blocks.js';
import { formatPath, WireError } from './errors.js';

// Anthropic accepts `content: "text"` as shorthand; we always hold an array of blocks.
// A preprocess rather than a union, so the inferred type is one array type (`UserBlock[]`,
// not `TextBlock[] | UserBlock[]`, which could not be pushed to).
function blocks<T extends z.ZodType>(block: T) {
  return z.preprocess(
    (content) => (typeof content === 'string' ? [{ type: 'text', text: content }] : content),
    z.array(block),
  );
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

type Issue = z.core.$ZodIssue;

// zod reports a failed union (`content: string | Block[]`) at the union itself, which
// would name `content` for a bad `content[3].text`. Descend into the option that got
// furthest, so the error names the deepest field that is actually wrong.
function deepestIssue(issue: Issue): Issue {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  let best: Issue | undefined;
  for (const option of issue.errors) {
    const first = option[0];
    if (!first) continue;
    const candidate = deepestIssue({ ...first, path: [...issue.path, ...first.path] } as Issue);
    if (!best || candidate.path.length > best.path.length) best = candidate;
  }
  if (!best || best.path.length > issue.path.length) return best ?? issue;
  // No option got past the union itself (`content: 5`): say what each option expected.
  const expected = issue.errors.flatMap((option) =>
    option[0]?.code === 'invalid_type' && option[0].path.length === 0 ? [option[0].expected] : [],
  );
  if (expected.length !== issue.errors.length) return best;
  return { ...best, message: `Invalid input: expected ${expected.join(' or ')}` };
}

function fail(root: string, error: z.ZodError): never {
  const first = error.issues[0];
  const issue = first ? deepestIssue(first) : undefined;
  const path = (issue?.path ?? []).map((key) => (typeof key === 'number' ? key : String(key)));
  throw new WireError('invalid', `${formatPath(root, path)}: ${issue?.message ?? 'invalid'}`, {
    path,
    cause: error,
  });
}

// zod reads the input through ordinary property access; a throwing getter or a revoked
// proxy would escape as a bare TypeError. Every failure leaves as a WireError.
function safeParse<T>(schema: z.ZodType<T>, input: unknown, root: string): T {
  let result: z.ZodSafeParseResult<T>;
  try {
    result = schema.safeParse(input);
  } catch (cause) {
    throw new WireError('invalid', `${root}: could not be read (${String(cause)})`, { cause });
  }
  if (!result.success) fail(root, result.error);
  return result.data;
}

const MessagesSchema = z.array(MessageSchema);

/**
 * Validates one message.
 *
 * @throws {WireError} `invalid`, naming the path of the first bad field.
 * @example
 * const message = parseMessage(JSON.parse(line));
 */
export function parseMessage(input: unknown): Message {
  return safeParse(MessageSchema, input, 'message');
}

/**
 * Validates a transcript: every message, then the pairing of tool calls
 * (see {@link checkTranscript}).
 *
 * @throws {WireError} `invalid` naming the first bad field, or `invalid_transcript`.
 */
export function parseMessages(input: unknown): Message[] {
  const messages = safeParse(MessagesSchema, input, 'messages');
  checkTranscript(messages);
  return messages;
}

/**
 * Checks what makes a list of messages a transcript: each `tool_use` id appears once,
 * and each `tool_result` answers a `tool_use` of an earlier message, at most once.
 * A `tool_use` still waiting for its result (a suspended turn) is fine. It reads only the
 * pairing: give it parsed messages (see {@link parseMessages}).
 *
 * @throws {WireError} `invalid_transcript`, with the path of the offending block; `invalid`
 *   when `messages` cannot even be read as a list of messages with block arrays.
 */
export function checkTranscript(messages: readonly Message[]): void {
  try {
    checkPairing(messages);
  } catch (cause) {
    if (WireError.is(cause)) throw cause;
    throw new WireError(
      'invalid',
      `messages: could not be read as a list of messages (${String(cause)}); parse them with parseMessages first`,
      { cause },
    );
  }
}

function checkPairing(messages: readonly Message[]): void {
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
