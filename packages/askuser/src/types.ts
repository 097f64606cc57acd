import { z } from 'zod';
import { type ResumeAnswer, resumeAnswerSchema } from './answer.js';
import { audienceSchema, type Identity, identitySchema } from './audience.js';

const int32 = z.number().int().min(-2_147_483_648).max(2_147_483_647);

// Anything JSON.stringify turns into JSON text (rejects functions, symbols, BigInt, cycles).
const jsonValue = z.unknown().refine(
  (value) => {
    try {
      return value === undefined || JSON.stringify(value) !== undefined;
    } catch {
      return false;
    }
  },
  { message: 'must be a JSON value' },
);

/** Schema of the fields `insert` takes; see {@link InsertPauseParams}. */
export const insertPauseParamsSchema = z.object({
  // pg_notify carries the token as payload (under 8000 bytes), hence the upper bound.
  token: z.string().min(1).max(1000),
  conversationId: z.string(),
  kind: z.string(),
  question: z.string(),
  options: jsonValue.optional(),
  priority: int32.optional(),
  toolCallId: z.string(),
  resumeContext: jsonValue.optional(),
  proxiedFromChildId: z.string().nullish(),
  proxiedToolCallId: z.string().nullish(),
  audience: audienceSchema.optional(),
  requester: z.string().min(1).max(200).nullish(),
  requesterMayNotAnswer: z.boolean().optional(),
  deadline: z
    .object({
      at: z.coerce.date().optional(),
      inMs: z.number().int().min(0).max(2_147_483_647_000).optional(),
      answer: resumeAnswerSchema,
    })
    .strict()
    .refine((d) => (d.at === undefined) !== (d.inMs === undefined), {
      message: 'a deadline has exactly one of at (a time) or inMs (milliseconds from now)',
    })
    .refine((d) => d.at === undefined || !Number.isNaN(d.at.getTime()), {
      message: 'deadline.at must be a valid time',
    })
    .nullish(),
});

/**
 * The plain fields of one new pause (never a tool or session type: the caller observing
 * the pause supplies them).
 * - `options`, `resumeContext`: any JSON value; `null` / omitted are stored as SQL NULL.
 * - `priority`: a 32-bit integer, higher first; default 0.
 * - `proxiedFromChildId`: the flat swarm worker id (`"w1"`..`"wN"`, stored verbatim, not a
 *   uuid) when the pause relays a child's question; `null`, omitted or `''` → SQL NULL.
 * - `proxiedToolCallId`: the child's tool call id; omitted, `null` or `''` → SQL NULL.
 * - `audience`: who may answer (operator `names` and/or `roles`); omitted or both empty →
 *   any operator. Enforced only for answers that name an identity.
 * - `requester`: the person the agent acts for; `requesterMayNotAnswer: true` (separation
 *   of duties) refuses an answer by that identity as `forbidden`.
 * - `deadline`: when the wait ends without an answer (`at`, a time; or `inMs` from now by
 *   the database's clock) and the `answer` applied then (`decline`, `cancel`, or `accept`
 *   with its content). From then on an answer is refused as `expired`; {@link
 *   AskUserStore.expire} applies it, once. Omitted or `null`: the question waits forever.
 */
export type InsertPauseParams = z.input<typeof insertPauseParamsSchema>;

/** Alias of {@link InsertPauseParams}, the name the reference uses. */
export type InsertParams = InsertPauseParams;

/**
 * A still-pending pause (`resumed_at IS NULL`), as plain values.
 * `proxiedFromChildId` is the source thread the approval list shows: the worker id the
 * pause relays for, or `''` for a direct call; `proxiedToolCallId` likewise `''` when absent.
 */
export interface Pending {
  token: string;
  conversationId: string;
  kind: string;
  question: string;
  /** The JSON options, or `null` when none were given. */
  options: unknown;
  priority: number;
  toolCallId: string;
  /** The JSON resume context, or `null` when none was given. */
  resumeContext: unknown;
  proxiedFromChildId: string;
  proxiedToolCallId: string;
  createdAt: Date;
  /** Who may answer; both lists empty means any operator. */
  audience: { names: string[]; roles: string[] };
  /** The person the agent acts for, or `null`. */
  requester: string | null;
  /** Whether the requester is barred from answering (separation of duties). */
  requesterMayNotAnswer: boolean;
  /** When the wait ends without an answer and what is applied then, or `null`: it waits forever. */
  deadline: PauseDeadline | null;
}

/** A question's deadline: at `at` the outcome is `expired` and `answer` is applied. */
export interface PauseDeadline {
  at: Date;
  /** The default applied at the deadline: `decline`, `cancel`, or `accept` with its content. */
  answer: ResumeAnswer;
}

/**
 * Any pause, pending or resolved, with every field of a {@link Pending}, for operator
 * listings (`listRecent`, `listForConversation`).
 * `resumedAnswer` is the answer's `content` (the `AUTO_TERMINATED_MARKER` for
 * auto-resolved rows), or `''` while pending; `answer` is the whole `{ action, content }`.
 */
export interface PauseRecord extends Pending {
  resumed: boolean;
  resumedAnswer: string;
  answer: ResumeAnswer | null;
  resumedAt: Date | null;
  /** Who answered (the `answeredBy` given to `markResumed`), or `null`: pending, or not told. */
  answeredBy: string | null;
  /** When the deadline was applied (the outcome `expired`; `answer` is the default), else `null`. */
  expiredAt: Date | null;
}

/** A resolved pause with its answer: what an executive resumes from. */
export interface AnsweredPause extends Pending {
  answer: ResumeAnswer;
  resumedAt: Date;
  /** Who answered, or `null` when the answer did not say. */
  answeredBy: string | null;
  /**
   * When the deadline was applied, or `null`: an answer. When set, nobody answered and
   * `answer` is the question's default (`deadline.answer`), never a person's decline.
   */
  expiredAt: Date | null;
}

/** One group of {@link AskUserStore.countPending}: pending pauses of one kind and priority. */
export interface PendingCount {
  kind: string;
  priority: number;
  /** Pending pauses of this kind and priority. */
  pending: number;
  /** Of them, those whose deadline has passed (by the database's clock) and was not applied yet. */
  overdue: number;
}

/** Schema of {@link MarkResumedOptions}. */
export const markResumedOptionsSchema = z
  .object({ answeredBy: z.string().min(1).max(200).nullish() })
  .strict();

/**
 * Options of `markResumed` and `markResumedBatch`.
 * - `answeredBy`: who answered, for the audit trail (an operator's name, an OS user name;
 *   1 to 200 characters); omitted or `null` → SQL NULL.
 */
export type MarkResumedOptions = z.input<typeof markResumedOptionsSchema>;

/** Schema of {@link AnswerOptions}. */
export const answerOptionsSchema = z
  .object({
    answeredBy: z.string().min(1).max(200).nullish(),
    identity: identitySchema.optional(),
    signedInWith: z.string().max(200).optional(),
    channel: z.string().max(200).optional(),
    shownDigest: z.string().max(200).optional(),
  })
  .strict();

/**
 * Options of `markResumed` (a superset of {@link MarkResumedOptions}).
 * - `identity`: who answers, `{ name, roles }`. The answer is refused with `forbidden` when
 *   the question's audience does not admit it, or when it is the requester of a question
 *   with `requesterMayNotAnswer`, checked in the statement that records the answer. It sets
 *   `answeredBy` to its name unless `answeredBy` is given. Without an identity no audience
 *   is checked: the caller answers as an administrator (e.g. a CLI over the database URL).
 * - `signedInWith`, `channel`, `shownDigest`: how the identity signed in (`key`, `oidc`,
 *   `os-user`), through which channel it answered (`page`, `api`, `cli`), and a digest of
 *   what it was shown; recorded only in the audit log (when the store has an audit key).
 */
export type AnswerOptions = Omit<z.input<typeof answerOptionsSchema>, 'identity'> & {
  identity?: Identity;
};

/** Options of `insert`, recorded only in the audit log (when the store has an audit key). */
export interface InsertOptions {
  /** The run that asked. */
  runId?: string;
  /** A digest of the tool call's arguments, as the caller computes it. */
  argumentsDigest?: string;
}

/** Options of `listAnswered`. */
export interface ListAnsweredOptions {
  /** At most this many rows; `<= 0` or omitted → 100. */
  limit?: number;
  /** Only this conversation's answered pauses. */
  conversationId?: string;
}

/** Options of `cleanupResumedOlderThan`. */
export interface CleanupOptions {
  /**
   * Conversations whose resolved pauses are kept whatever their age: those the caller still
   * needs (e.g. the conversations of runs that have not finished reading their answers).
   */
  keepConversations?: readonly string[];
  /** Count what would be deleted, and delete nothing. */
  dryRun?: boolean;
}

/**
 * The answers of a batch: a `Map` or a plain record from token to answer, or an array of
 * `{ token, answer }` (an array naming a token twice is `invalid_answer`).
 */
export type ResumeAnswers =
  | ReadonlyMap<string, ResumeAnswer>
  | Readonly<Record<string, ResumeAnswer>>
  | ReadonlyArray<{ token: string; answer: ResumeAnswer }>;
