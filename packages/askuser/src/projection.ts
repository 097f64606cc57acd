// Internal: the one row projection every read shares, and its mapping to the public types.
import { sql } from 'drizzle-orm';
import { type ResumeAnswer, resumeAnswerSchema } from './answer.js';
import { AskUserError } from './errors.js';
import { pausedStates as t } from './schema.js';
import type { AnsweredPause, PauseRecord, Pending } from './types.js';

// jsonb is read as text and parsed here: the drivers disagree on jsonb scalars
// (a stored JSON string "123" would come back as the number 123 through drizzle).
export const columns = {
  token: t.token,
  conversationId: t.conversationId,
  kind: t.kind,
  question: t.question,
  options: sql<string | null>`${t.options}::text`,
  priority: t.priority,
  toolCallId: t.toolCallId,
  resumeContext: sql<string | null>`${t.resumeContext}::text`,
  proxiedFromChildId: t.proxiedFromChildId,
  proxiedToolCallId: t.proxiedToolCallId,
  createdAt: t.createdAt,
  resumedAt: t.resumedAt,
  resumedAnswer: sql<string | null>`${t.resumedAnswer}::text`,
  answeredBy: t.answeredBy,
  audienceNames: sql<string>`array_to_json(${t.audienceNames})::text`,
  audienceRoles: sql<string>`array_to_json(${t.audienceRoles})::text`,
  requester: t.requester,
  requesterMayNotAnswer: t.requesterMayNotAnswer,
  deadlineAt: t.deadlineAt,
  deadlineAnswer: sql<string | null>`${t.deadlineAnswer}::text`,
  expiredAt: t.expiredAt,
  remindAt: t.remindAt,
  remindedAt: t.remindedAt,
  escalateAt: t.escalateAt,
  escalateNames: sql<string>`array_to_json(${t.escalateNames})::text`,
  escalateRoles: sql<string>`array_to_json(${t.escalateRoles})::text`,
  escalatedAt: t.escalatedAt,
  quorum: t.quorum,
  quorumDeclines: t.quorumDeclines,
};

export type Row = {
  token: string;
  conversationId: string;
  kind: string;
  question: string;
  options: string | null;
  priority: number;
  toolCallId: string;
  resumeContext: string | null;
  proxiedFromChildId: string | null;
  proxiedToolCallId: string | null;
  createdAt: Date;
  resumedAt: Date | null;
  resumedAnswer: string | null;
  answeredBy: string | null;
  audienceNames: string;
  audienceRoles: string;
  requester: string | null;
  requesterMayNotAnswer: boolean;
  deadlineAt: Date | null;
  deadlineAnswer: string | null;
  expiredAt: Date | null;
  remindAt: Date | null;
  remindedAt: Date | null;
  escalateAt: Date | null;
  escalateNames: string;
  escalateRoles: string;
  escalatedAt: Date | null;
  quorum: number | null;
  quorumDeclines: number | null;
};

function parseJson(text: string | null): unknown {
  return text === null ? null : JSON.parse(text);
}

export function toPending(row: Row): Pending {
  return {
    token: row.token,
    conversationId: row.conversationId,
    kind: row.kind,
    question: row.question,
    options: parseJson(row.options),
    priority: row.priority,
    toolCallId: row.toolCallId,
    resumeContext: parseJson(row.resumeContext),
    proxiedFromChildId: row.proxiedFromChildId ?? '',
    proxiedToolCallId: row.proxiedToolCallId ?? '',
    createdAt: row.createdAt,
    audience: {
      names: JSON.parse(row.audienceNames) as string[],
      roles: JSON.parse(row.audienceRoles) as string[],
    },
    requester: row.requester,
    requesterMayNotAnswer: row.requesterMayNotAnswer,
    deadline:
      row.deadlineAt === null
        ? null
        : { at: row.deadlineAt, answer: parseStoredAnswer(row, row.deadlineAnswer) ?? decline },
    reminder: row.remindAt === null ? null : { at: row.remindAt, remindedAt: row.remindedAt },
    escalation:
      row.escalateAt === null
        ? null
        : {
            at: row.escalateAt,
            names: JSON.parse(row.escalateNames) as string[],
            roles: JSON.parse(row.escalateRoles) as string[],
            escalatedAt: row.escalatedAt,
          },
    quorum:
      row.quorum === null ? null : { approvals: row.quorum, declines: row.quorumDeclines ?? 1 },
  };
}

const decline: ResumeAnswer = { action: 'decline', content: '' };

function storedAnswer(row: Row): ResumeAnswer | null {
  return parseStoredAnswer(row, row.resumedAnswer);
}

function parseStoredAnswer(row: Row, text: string | null): ResumeAnswer | null {
  if (text === null) return null;
  const parsed = resumeAnswerSchema.safeParse(parseJson(text));
  if (parsed.success) return parsed.data;
  throw new AskUserError(
    'corrupt',
    `an answer of pause ${JSON.stringify(row.token)} is not { action, content }: was it written by another tool?`,
    { tokens: [row.token], cause: parsed.error },
  );
}

export function toRecord(row: Row): PauseRecord {
  const answer = storedAnswer(row);
  return {
    ...toPending(row),
    resumed: row.resumedAt !== null,
    resumedAnswer: answer?.content ?? '',
    answer,
    resumedAt: row.resumedAt,
    answeredBy: row.answeredBy,
    expiredAt: row.expiredAt,
  };
}

export function toAnswered(row: Row): AnsweredPause {
  const answer = storedAnswer(row);
  if (answer === null || row.resumedAt === null) {
    throw new AskUserError(
      'corrupt',
      `pause ${JSON.stringify(row.token)} is resolved but has no answer`,
      { tokens: [row.token] },
    );
  }
  return {
    ...toPending(row),
    answer,
    resumedAt: row.resumedAt,
    answeredBy: row.answeredBy,
    expiredAt: row.expiredAt,
  };
}
