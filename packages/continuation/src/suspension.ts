import {
  checkTranscript,
  isParsedMessages,
  JsonValueSchema,
  type Message,
  MessageSchema,
  toolUses,
  WireError,
} from '@x/wire';
import { z } from 'zod';
import { ContinuationError } from './errors.js';
import { fieldPath, firstIssue } from './field-path.js';
import { jsonEqual } from './json-equal.js';
import { validateSingletonSuspension } from './singleton.js';

/**
 * The newest format version this code writes and reads. It reads version 1 too, and a
 * suspension without a deadline is version 1, so readers of version 1 still read it.
 */
export const SUSPENSION_VERSION = 2;

// NUL can be stored in neither a file name nor a Postgres text column.
const Id = z
  .string()
  .min(1)
  .refine((id) => !id.includes('\u0000'), 'must not contain NUL');

// Years 0-9999: what RFC 3339 (and so the persisted `created_at`) can express.
const Timestamp = z
  .date()
  .refine(
    (d) => !Number.isNaN(d.getTime()) && d.getUTCFullYear() >= 0 && d.getUTCFullYear() <= 9999,
    'expected a valid date between the years 0 and 9999',
  );

/**
 * When the question stops waiting, and the answer its default is (format version 2). The
 * store keeps it; the AI SDK bridge applies it (`expiredModelMessages`) and refuses a later
 * answer (`resumeModelMessages`, `expired`). For the bridge `answer` is a denial
 * (`{ approved: false, reason? }`) or a client tool's output (`{ output, isError? }`).
 */
export const SuspensionDeadlineSchema = z.object({
  at: Timestamp,
  answer: JsonValueSchema,
});

/** A suspension's deadline; see {@link SuspensionDeadlineSchema}. */
export type SuspensionDeadline = z.infer<typeof SuspensionDeadlineSchema>;

/**
 * The exact continuation of a turn paused on a human answer (TypeScript shape; the
 * persisted JSON is snake_case, see `encodeSuspension`).
 *
 * - `assistant` is the response carrying the suspending tool use.
 * - `version` is its record's format: 1, or 2 when it carries a `deadline`.
 * - `messages` is the full transcript up to and including `assistant`. Set it when the
 *   caller keeps no transcript of its own; `resumeMessages` then hands back the whole
 *   conversation plus the answer. Leave it out when the caller still holds the prior
 *   turns: `resumeMessages` then returns only the two messages to append, so the
 *   transcript is never duplicated.
 */
export const SuspensionSchema = z.object({
  version: z.union([z.literal(1), z.literal(SUSPENSION_VERSION)]),
  sessionId: Id.optional(),
  runId: Id.optional(),
  interactionId: Id,
  toolUseId: z.string().min(1),
  toolName: z.string().min(1).optional(),
  toolInput: JsonValueSchema.optional(),
  assistant: MessageSchema,
  messages: z.array(MessageSchema).optional(),
  createdAt: Timestamp,
  resolved: z.boolean(),
  deadline: SuspensionDeadlineSchema.optional(),
});

/** The exact continuation of a turn paused on a human answer; see {@link SuspensionSchema}. */
export type Suspension = z.infer<typeof SuspensionSchema>;

function invalid(field: string, message: string, interactionId?: string, cause?: unknown): never {
  throw new ContinuationError('invalid', `suspension ${field}: ${message}`, {
    field,
    ...(interactionId === undefined ? {} : { interactionId }),
    cause,
  });
}

// The same check without the transcript, for one `isParsedMessages` already vouched for.
const SuspensionWithoutTranscriptSchema = SuspensionSchema.omit({ messages: true });

/**
 * Checks everything a store checks before it writes: the schema, the singleton rule
 * ({@link validateSingletonSuspension}), and, when `messages` is given, that it is a
 * well-formed transcript whose last message is `assistant` itself.
 *
 * @returns the parsed suspension (string message content normalised to blocks), sharing
 *   nothing with `input`.
 * @throws {ContinuationError} `invalid` naming the bad field, or `not_singleton`.
 */
export function validateSuspension(input: unknown): Suspension {
  return checkSuspension(input, false);
}

/**
 * {@link validateSuspension}; with `shareTranscript`, a transcript already in the shape the
 * schema returns is checked in place and kept, not copied. For a caller that encodes the
 * result at once ({@link prepareSave}): copying 1,000 messages costs more than writing them.
 */
export function checkSuspension(input: unknown, shareTranscript: boolean): Suspension {
  const kept = shareTranscript ? parsedTranscriptOf(input) : undefined;
  const parsed =
    kept === undefined
      ? SuspensionSchema.safeParse(input)
      : SuspensionWithoutTranscriptSchema.safeParse(input);
  const id =
    typeof input === 'object' && input !== null && 'interactionId' in input
      ? String(input.interactionId)
      : undefined;
  if (!parsed.success) {
    const [field, message] = firstIssue(parsed.error);
    invalid(field, message, id, parsed.error);
  }
  const s: Suspension = kept === undefined ? parsed.data : { ...parsed.data, messages: kept };
  // Version 1 has no deadline: a reader of version 1 would drop it, and the question would wait forever.
  if (s.deadline !== undefined && s.version === 1) {
    invalid('version', 'a suspension with a deadline is version 2', id);
  }
  validateSingletonSuspension(s.assistant, s.toolUseId);
  if (s.messages !== undefined) {
    const last = s.messages.at(-1);
    if (last === undefined) {
      invalid('messages', 'must end with the assistant message (leave it out when empty)', id);
    }
    if (!jsonEqual(last, s.assistant)) {
      invalid(
        `messages[${s.messages.length - 1}]`,
        'the last message of the transcript must be the suspending assistant message',
        id,
      );
    }
    try {
      checkTranscript(s.messages);
    } catch (err) {
      if (!WireError.is(err)) throw err;
      invalid(fieldPath(['messages', ...err.path]), err.message, id, err);
    }
  }
  return s;
}

/** `input.messages` when it is already in its parsed shape, else undefined (the schema decides). */
function parsedTranscriptOf(input: unknown): Message[] | undefined {
  try {
    const messages = (input as { messages?: unknown } | null)?.messages;
    return isParsedMessages(messages) ? messages : undefined;
  } catch {
    return undefined; // a throwing getter: the schema reports it
  }
}

/** What {@link createSuspension} needs; the rest is filled in or derived. */
export interface SuspensionInit {
  /** Stable id of the question; a file name in the file store (letters, digits, `.`, `_`, `-`). */
  interactionId: string;
  /** The `tool_use` the turn stopped on; must be the only tool use of `assistant`. */
  toolUseId: string;
  /** The assistant response carrying that tool use. */
  assistant: Message;
  /** The full transcript ending with `assistant`, for a caller that keeps no transcript. */
  messages?: Message[];
  sessionId?: string;
  runId?: string;
  /** Defaults to now. */
  createdAt?: Date;
  /** When the question stops waiting, and its default; makes the suspension version 2. */
  deadline?: SuspensionDeadline;
}

/**
 * Builds a validated, unresolved suspension: `version`, `createdAt` and `resolved` are
 * filled in, `toolName` and `toolInput` are taken from the tool use. A transcript already in
 * the shape the schema returns is checked in place and its messages kept, not copied (the
 * array is the suspension's own): a store encodes it at once.
 *
 * @throws {ContinuationError} `not_singleton` or `invalid`, exactly as a store's `save` would.
 * @example
 * const suspension = createSuspension({ interactionId: 'ask-42', toolUseId: 'toolu_1', assistant });
 * await store.save(suspension);
 */
export function createSuspension(init: SuspensionInit): Suspension {
  validateSingletonSuspension(init.assistant, init.toolUseId);
  const use = toolUses(init.assistant).find((u) => u.id === init.toolUseId);
  const candidate: Suspension = {
    version: init.deadline === undefined ? 1 : SUSPENSION_VERSION,
    interactionId: init.interactionId,
    toolUseId: init.toolUseId,
    assistant: init.assistant,
    createdAt: init.createdAt ?? new Date(),
    resolved: false,
  };
  if (init.sessionId !== undefined) candidate.sessionId = init.sessionId;
  if (init.runId !== undefined) candidate.runId = init.runId;
  if (use !== undefined) {
    candidate.toolName = use.name;
    candidate.toolInput = use.input;
  }
  if (init.messages !== undefined) candidate.messages = [...init.messages];
  if (init.deadline !== undefined) candidate.deadline = init.deadline;
  return checkSuspension(candidate, true);
}
