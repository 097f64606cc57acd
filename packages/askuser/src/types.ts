import { unstorableText } from '@x/postgres-kit';
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

// Text the database can store: no NUL, no lone surrogate (refused here, before the database).
const text = () =>
  z.string().superRefine((value, ctx) => {
    const problem = unstorableText(value);
    if (problem) {
      ctx.addIssue({
        code: 'custom',
        message: `holds ${problem}, which the database cannot store`,
      });
    }
  });

// A time of a question: `at`, or `inMs` from now by the database's clock.
const time = {
  at: z.coerce.date().optional(),
  inMs: z.number().int().min(0).max(2_147_483_647_000).optional(),
};

/** `schema` (with {@link time}'s fields) refined to exactly one valid time. */
function timed<S extends z.ZodType<{ at?: Date | undefined; inMs?: number | undefined }>>(
  schema: S,
) {
  return schema
    .refine((d) => (d.at === undefined) !== (d.inMs === undefined), {
      message: 'a time has exactly one of at (a time) or inMs (milliseconds from now)',
    })
    .refine((d) => d.at === undefined || !Number.isNaN(d.at.getTime()), {
      message: 'at must be a valid time',
    });
}

/** Schema of the fields `insert` takes; see {@link InsertPauseParams}. */
export const insertPauseParamsSchema = z.object({
  // pg_notify carries the token as payload (under 8000 bytes), hence the upper bound.
  token: text().min(1).max(1000),
  conversationId: text(),
  kind: text(),
  question: text(),
  options: jsonValue.optional(),
  priority: int32.optional(),
  toolCallId: text(),
  resumeContext: jsonValue.optional(),
  proxiedFromChildId: text().nullish(),
  proxiedToolCallId: text().nullish(),
  audience: audienceSchema.optional(),
  requester: text().min(1).max(200).nullish(),
  requesterMayNotAnswer: z.boolean().optional(),
  deadline: timed(z.object({ ...time, answer: resumeAnswerSchema }).strict()).nullish(),
  remind: timed(z.object(time).strict()).nullish(),
  escalate: timed(
    z
      .object({
        ...time,
        names: z.array(z.string().min(1).max(200)).max(100).optional(),
        roles: z.array(z.string().min(1).max(200)).max(100).optional(),
      })
      .strict(),
  ).nullish(),
  quorum: z
    .object({
      approvals: z.number().int().min(1).max(1000),
      declines: z.number().int().min(1).max(1000).optional(),
    })
    .strict()
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
 * - `remind`: when (`at` or `inMs`) to remind its audience; {@link AskUserStore.applyDue}
 *   records it once (`question-reminded`), the caller delivers it.
 * - `escalate`: when to add `names` and/or `roles` to its audience; `applyDue` applies it
 *   once (`question-escalated`). An empty audience (anyone) stays as it is.
 * - `quorum`: `approvals` distinct approvers (M of the audience) must accept before it
 *   resolves; `declines` (default 1) distinct declines resolve it as declined. Each answer
 *   is recorded in `aura.approvals`, one per person; see {@link AskUserStore.markResumed}.
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
  /** When its audience is reminded, or `null`. */
  reminder: PauseReminder | null;
  /** When its audience is widened, or `null`. */
  escalation: PauseEscalation | null;
  /** The approvals it needs (M of N), or `null`: the first answer resolves it. */
  quorum: PauseQuorum | null;
}

/** A question's reminder: when it is due, and when it was applied (`null`: not yet). */
export interface PauseReminder {
  at: Date;
  remindedAt: Date | null;
}

/** A question's escalation: when, whom it adds to the audience, and when it was applied. */
export interface PauseEscalation {
  at: Date;
  names: string[];
  roles: string[];
  escalatedAt: Date | null;
}

/** How many distinct approvals resolve a question, and how many declines. */
export interface PauseQuorum {
  approvals: number;
  declines: number;
}

/** One person's recorded answer to a question that needs a quorum. */
export interface Approval {
  operator: string;
  action: ResumeAnswer['action'];
  content: string;
  at: Date;
}

/**
 * What an answer did: `resolved` when it resolved the question (always, without a quorum).
 * For a quorum, `quorum` says what is recorded: the approvers and decliners so far (this
 * answer included, once per person), how many are needed, and whether this answer was
 * counted (`false`: that person had answered already).
 */
export interface AnswerOutcome {
  resolved: boolean;
  /**
   * The question this answer resolved (by itself, or as the approval that completed its
   * quorum), as the statement that resolved it returned it: what a caller times and traces
   * its wait by, without another read. Absent when it resolved nothing.
   */
  question?: AnsweredQuestion;
  quorum?: {
    approvals: string[];
    declines: string[];
    needed: number;
    declinesNeeded: number;
    counted: boolean;
  };
}

/** Of a question an answer resolved, its wait: {@link AnswerOutcome.question}. */
export type AnsweredQuestion = Pick<
  Pending,
  'conversationId' | 'toolCallId' | 'kind' | 'priority' | 'createdAt' | 'audience' | 'resumeContext'
> & { resumedAt: Date };

/**
 * What {@link AskUserStore.applyDue} did: whether it reminded or escalated now (each once
 * over all calls), whether the question still waits, and when it is next due (the earliest
 * of its unapplied reminder, escalation and deadline), or `null`.
 */
export interface DueOutcome {
  reminded: boolean;
  escalated: { names: string[]; roles: string[] } | null;
  pending: boolean;
  nextAt: Date | null;
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
  /**
   * The tool call's arguments themselves (plain JSON), for a call that runs only once approved:
   * the log then keeps both them and the arguments an accepting answer gave instead.
   */
  arguments?: unknown;
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
