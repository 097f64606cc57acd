import {
  isParsedMessages,
  type JsonValue,
  JsonValueSchema,
  type Message,
  MessageSchema,
} from '@x/wire';
import { z } from 'zod';
import { ContinuationError } from './errors.js';
import { firstIssue } from './field-path.js';
import { SUSPENSION_VERSION, type Suspension, type SuspensionDeadline } from './suspension.js';

// RFC 3339 with any number of fractional digits: other writers of the format use nanoseconds.
const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The persisted JSON shape of a suspension (`interaction_id`, `tool_use_id`, `created_at` as
 * RFC 3339, ...): one format for every store, readable by any program that writes it.
 * Version 2 adds `deadline`; a suspension without one is written as version 1.
 */
export interface SuspensionRecord {
  version: number;
  session_id?: string;
  run_id?: string;
  interaction_id: string;
  tool_use_id: string;
  tool_name?: string;
  tool_input?: JsonValue;
  assistant: JsonValue;
  messages?: JsonValue[];
  created_at: string;
  /** Version 2: when the question stops waiting (`at`, RFC 3339) and its default `answer`. */
  deadline?: { at: string; answer: JsonValue };
  resolved: boolean;
}

const Rfc3339 = z.string().regex(RFC3339, 'expected an RFC 3339 timestamp');

// The newest version's shape; an older record is upgraded to it first (upgradeRecord).
const RecordSchema = z.object({
  version: z.literal(SUSPENSION_VERSION),
  // Other writers leave empty strings for absent values; they read back as absent.
  session_id: z.string().optional(),
  run_id: z.string().optional(),
  interaction_id: z.string().min(1),
  tool_use_id: z.string().min(1),
  tool_name: z.string().optional(),
  tool_input: JsonValueSchema.optional(),
  assistant: MessageSchema,
  messages: z.array(MessageSchema).nullish(),
  created_at: Rfc3339,
  deadline: z.object({ at: Rfc3339, answer: JsonValueSchema }).optional(),
  resolved: z.boolean(),
});

// The same check without the transcript, for messages `isParsedMessages` already vouched for
// (they then have no issue, so the first issue of the rest is the one RecordSchema reports).
const RecordWithoutMessagesSchema = RecordSchema.omit({ messages: true });

/** Options of {@link decodeSuspension}. */
export interface DecodeSuspensionOptions {
  /**
   * The caller hands `json` over (it comes straight from `JSON.parse` and is not kept):
   * a transcript already in its parsed shape is then used as is, without the copy the
   * schema would make (it is still checked). Default `false`: the result shares nothing
   * with `json`.
   */
  owned?: boolean;
}

/**
 * Encodes a suspension as its persisted snake_case JSON object (optional fields left out
 * when absent, `created_at` as RFC 3339 in UTC). It does not validate: stores call
 * `validateSuspension` first.
 *
 * @example
 * const text = JSON.stringify(encodeSuspension(suspension));
 */
export function encodeSuspension(s: Suspension): SuspensionRecord {
  // A fixed key order, `version` first and `resolved` last: the file store reads the flag off the ends.
  const record: Partial<SuspensionRecord> = { version: s.version };
  if (s.sessionId) record.session_id = s.sessionId;
  if (s.runId) record.run_id = s.runId;
  record.interaction_id = s.interactionId;
  record.tool_use_id = s.toolUseId;
  if (s.toolName) record.tool_name = s.toolName;
  if (s.toolInput !== undefined) record.tool_input = s.toolInput;
  record.assistant = s.assistant as JsonValue;
  if (s.messages !== undefined && s.messages.length > 0)
    record.messages = s.messages as JsonValue[];
  record.created_at = s.createdAt.toISOString();
  if (s.deadline !== undefined) {
    record.deadline = { at: s.deadline.at.toISOString(), answer: s.deadline.answer };
  }
  record.resolved = s.resolved;
  return record as SuspensionRecord;
}

/** Parses an RFC 3339 timestamp keeping millisecond precision (finer digits are dropped). */
function parseTimestamp(text: string): Date | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const fraction = (m[3] ?? '').slice(0, 3).padEnd(3, '0');
  const zone = m[4]?.toUpperCase() ?? 'Z';
  const date = new Date(`${m[1]}T${m[2]}.${fraction}${zone}`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * The first step of {@link decodeSuspension}: the record is a JSON object of the version
 * this code reads. Internal (not exported from the package): the file store's
 * `markResolved` uses it to rewrite a record without decoding the whole transcript.
 *
 * @throws {ContinuationError} `invalid` or `unsupported_version`, as `decodeSuspension`.
 */
export function checkRecordVersion(json: unknown): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new ContinuationError('invalid', 'suspension record: expected a JSON object', {
      field: '(record)',
    });
  }
  const raw = json as Record<string, unknown>;
  const interactionId = typeof raw.interaction_id === 'string' ? raw.interaction_id : undefined;
  const context = interactionId === undefined ? {} : { interactionId };
  const version = raw.version;
  if (typeof version !== 'number' || !Number.isInteger(version)) {
    throw new ContinuationError('invalid', 'suspension record version: expected an integer', {
      ...context,
      field: 'version',
    });
  }
  if (version < 1 || version > SUSPENSION_VERSION) {
    throw new ContinuationError(
      'unsupported_version',
      `suspension record has version ${version}, this code reads versions 1 to ${SUSPENSION_VERSION}: upgrade @x/continuation`,
      context,
    );
  }
  return raw;
}

/**
 * The upgrade of a record of version 1 to version 2: version 2 only adds `deadline`, which
 * version 1 does not have (a `deadline` key in a version 1 record is not read as one, as a
 * reader of version 1 would not).
 */
function upgradeV1(raw: Record<string, unknown>): Record<string, unknown> {
  const { deadline: _ignored, ...rest } = raw;
  return { ...rest, version: 2 };
}

/** A record of any version this code reads, as the newest version. */
function upgradeRecord(raw: Record<string, unknown>): Record<string, unknown> {
  return raw.version === 1 ? upgradeV1(raw) : raw;
}

/**
 * Decodes a persisted snake_case JSON object (as written by {@link encodeSuspension} or by
 * another writer of the format) into a {@link Suspension}. The version is checked first, so a
 * record from newer code is never misread.
 *
 * A record of version 1 is upgraded to version 2 first; the suspension keeps the version it was
 * read at, so writing it back does not break readers of version 1.
 *
 * @throws {ContinuationError} `unsupported_version` for a version other than 1 and 2; `invalid`
 *   naming the first bad field (`field` is the snake_case path, e.g. `created_at`).
 * @example
 * const suspension = decodeSuspension(JSON.parse(text), { owned: true });
 */
export function decodeSuspension(json: unknown, options: DecodeSuspensionOptions = {}): Suspension {
  const read = checkRecordVersion(json);
  const raw = upgradeRecord(read);
  const interactionId = typeof raw.interaction_id === 'string' ? raw.interaction_id : undefined;
  const context = interactionId === undefined ? {} : { interactionId };
  const rawMessages = raw.messages;
  const kept = options.owned === true && isParsedMessages(rawMessages) ? rawMessages : undefined;
  const parsed =
    kept === undefined ? RecordSchema.safeParse(raw) : RecordWithoutMessagesSchema.safeParse(raw);
  if (!parsed.success) {
    const [field, message] = firstIssue(parsed.error);
    throw new ContinuationError('invalid', `suspension record ${field}: ${message}`, {
      ...context,
      field,
      cause: parsed.error,
    });
  }
  const r = parsed.data;
  const createdAt = parseTimestamp(r.created_at);
  if (createdAt === undefined) {
    throw new ContinuationError('invalid', 'suspension record created_at: not a valid date', {
      ...context,
      field: 'created_at',
    });
  }
  let deadline: SuspensionDeadline | undefined;
  if (r.deadline !== undefined) {
    const at = parseTimestamp(r.deadline.at);
    if (at === undefined) {
      throw new ContinuationError('invalid', 'suspension record deadline.at: not a valid date', {
        ...context,
        field: 'deadline.at',
      });
    }
    deadline = { at, answer: r.deadline.answer };
  }
  const s: Suspension = {
    version: read.version === 1 ? 1 : SUSPENSION_VERSION,
    interactionId: r.interaction_id,
    toolUseId: r.tool_use_id,
    assistant: r.assistant,
    createdAt,
    resolved: r.resolved,
  };
  if (r.session_id) s.sessionId = r.session_id;
  if (r.run_id) s.runId = r.run_id;
  if (r.tool_name) s.toolName = r.tool_name;
  if (r.tool_input !== undefined) s.toolInput = r.tool_input;
  const messages = kept ?? (r as { messages?: Message[] | null }).messages;
  if (messages != null && messages.length > 0) s.messages = messages;
  if (deadline !== undefined) s.deadline = deadline;
  return s;
}
