import { type JsonValue, JsonValueSchema, type Message, MessageSchema } from '@x/wire';
import { z } from 'zod';
import { SessionError } from './errors.js';
import { guard } from './guard.js';
import { type Interrupt, interruptMapWithStatus } from './interrupt.js';
import { PLAN_DOCUMENT_KEY, PLAN_TODOS_KEY } from './reserved-keys.js';
import { TodoSchema } from './todo.js';
import { pathOf } from './zod-path.js';

/** The checkpoint format version this code writes and the newest it reads. */
export const CHECKPOINT_VERSION = 1;

/** A tool call the harness parked (not yet run or not yet answered) when the checkpoint was taken. */
export const PendingToolCallSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  input: JsonValueSchema,
});
/** See {@link PendingToolCallSchema}. */
export type PendingToolCall = z.infer<typeof PendingToolCallSchema>;

function keyedBy<T extends z.ZodType<{ id: string }>>(item: T, what: string) {
  return z.record(z.string(), item).superRefine((record, ctx) => {
    for (const [key, value] of Object.entries(record)) {
      if (value.id !== key) {
        ctx.addIssue({
          code: 'custom',
          path: [key, 'id'],
          message: `${what} under key "${key}" has id "${value.id}"`,
        });
      }
    }
  });
}

/**
 * A durable snapshot of one thread: the message window, the session manager's state (user
 * state + plan under reserved keys, interrupts) and the harness's park maps. Version 1.
 */
export const SessionCheckpointSchema = z.object({
  version: z.literal(CHECKPOINT_VERSION),
  window: z.array(MessageSchema),
  runtimeState: z.record(z.string(), JsonValueSchema).superRefine((state, ctx) => {
    const todos = state[PLAN_TODOS_KEY];
    if (todos !== undefined && todos !== null && !z.array(TodoSchema).safeParse(todos).success) {
      ctx.addIssue({ code: 'custom', path: [PLAN_TODOS_KEY], message: 'expected a todo list' });
    }
    const document = state[PLAN_DOCUMENT_KEY];
    if (document !== undefined && document !== null && typeof document !== 'string') {
      ctx.addIssue({ code: 'custom', path: [PLAN_DOCUMENT_KEY], message: 'expected a string' });
    }
  }),
  interrupts: z.object({
    pending: interruptMapWithStatus('pending'),
    resolved: interruptMapWithStatus('resolved'),
  }),
  pendingToolCalls: keyedBy(PendingToolCallSchema, 'pending tool call'),
  interruptToRequester: z.record(z.string(), z.string().min(1)),
});

/** See {@link SessionCheckpointSchema}. */
export interface SessionCheckpoint {
  version: typeof CHECKPOINT_VERSION;
  window: Message[];
  runtimeState: Record<string, JsonValue>;
  interrupts: { pending: Record<string, Interrupt>; resolved: Record<string, Interrupt> };
  pendingToolCalls: Record<string, PendingToolCall>;
  interruptToRequester: Record<string, string>;
}

/**
 * Validates a checkpoint: a JSON string or an already parsed value. The version is checked
 * first, so a checkpoint written by a newer release is refused clearly, never misread.
 *
 * @throws {SessionError} `unsupported_version` for a version this code does not know;
 *   `invalid` for malformed JSON or a field that does not match the schema (with its path).
 * @example
 * const checkpoint = parseCheckpoint(await readFile(path, 'utf8'));
 */
export function parseCheckpoint(input: unknown): SessionCheckpoint {
  return guard('checkpoint', () => readCheckpoint(input));
}

function readCheckpoint(input: unknown): SessionCheckpoint {
  let raw = input;
  if (typeof input === 'string') {
    assertWithinLimit(input);
    try {
      raw = JSON.parse(input);
    } catch (cause) {
      throw new SessionError('invalid', 'checkpoint is not valid JSON', { cause });
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new SessionError('invalid', 'checkpoint must be a JSON object');
  }
  const version = (raw as { version?: unknown }).version;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw new SessionError('invalid', 'checkpoint has no valid "version" (a positive integer)', {
      details: { path: ['version'], version },
    });
  }
  if (version > CHECKPOINT_VERSION) {
    throw new SessionError(
      'unsupported_version',
      `checkpoint version ${version} is newer than this @x/session understands (${CHECKPOINT_VERSION}): upgrade @x/session to read it`,
      { details: { version } },
    );
  }
  const parsed = SessionCheckpointSchema.safeParse(raw);
  if (!parsed.success) {
    const path = pathOf(parsed.error);
    throw new SessionError(
      'invalid',
      `checkpoint field ${path.join('.') || '(root)'}: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      { cause: parsed.error, details: { path } },
    );
  }
  return parsed.data as SessionCheckpoint;
}

/**
 * The largest checkpoint, as JSON text, that stores write or read: 16 MiB. A session this
 * big is a runaway window; refusing it keeps one thread from exhausting memory or disk.
 */
export const MAX_CHECKPOINT_BYTES = 16 * 1024 * 1024;

function assertWithinLimit(text: string): void {
  // A UTF-16 string never encodes to fewer bytes than its length, nor to more than 3× it.
  if (text.length * 3 <= MAX_CHECKPOINT_BYTES) return;
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_CHECKPOINT_BYTES) {
    throw new SessionError(
      'invalid',
      `checkpoint is ${bytes} bytes of JSON, over the limit of ${MAX_CHECKPOINT_BYTES}: trim the window or the session state`,
      { details: { bytes, limit: MAX_CHECKPOINT_BYTES } },
    );
  }
}

/**
 * The JSON text of a checkpoint, as stores persist it.
 *
 * @throws {SessionError} `invalid` when it is over {@link MAX_CHECKPOINT_BYTES}.
 */
export function serializeCheckpoint(checkpoint: SessionCheckpoint): string {
  const text = JSON.stringify(checkpoint);
  assertWithinLimit(text);
  return text;
}
