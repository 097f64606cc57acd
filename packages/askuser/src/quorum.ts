// Internal: the answer to a question that needs a quorum (M distinct approvals of its
// audience): each person's answer is recorded once, and the one that completes the quorum
// resolves the question, in the same transaction.
import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import type { ResumeAnswer } from './answer.js';
import { admits, textArray } from './audience.js';
import { appendEntries, conversationChain, inTransaction, type NewEntry } from './audit-chain.js';
import type { AskUserDatabase } from './database.js';
import { AskUserError } from './errors.js';
import type { AnswerOutcome } from './types.js';

/** What {@link answerQuorum} needs of an answer's options. */
export interface QuorumContext {
  answeredBy: string | null;
  identity: { name: string; roles?: readonly string[] | undefined } | undefined;
}

/**
 * Records one person's answer to a pending question with a quorum and resolves the question
 * when it completes the quorum (the M-th distinct accept, or the declines a policy needs; a
 * cancel resolves it at once). The question's row is locked first, so concurrent answers
 * count one after the other and exactly one of them resolves it.
 * @returns undefined when the question has no quorum, or takes no answer from this person
 *   (resolved, expired, outside its audience): the caller says why.
 * @throws {AskUserError} `invalid_argument` for an answer that does not say who gives it.
 */
export async function answerQuorum(
  db: AskUserDatabase,
  key: Buffer | undefined,
  token: string,
  answer: ResumeAnswer,
  c: QuorumContext,
  answerData: Record<string, unknown>,
): Promise<AnswerOutcome | undefined> {
  return inTransaction(db, async (tx) => {
    const admitted =
      c.identity === undefined
        ? sql`true`
        : admits(sql`${c.identity.name}`, textArray(c.identity.roles ?? []));
    const [row] = rowsOf(
      await tx.execute(sql`select p.conversation_id, p.quorum, p.quorum_declines, ${admitted} as admitted
        from aura.paused_states p
        where p.token = ${token} and p.quorum is not null and p.resumed_at is null
          and (p.deadline_at is null or p.deadline_at > now())
        for update`),
    );
    if (row === undefined || !isTrue(row.admitted)) return undefined;
    const who = c.answeredBy;
    if (who === null) {
      throw new AskUserError(
        'invalid_argument',
        `question ${JSON.stringify(token)} needs ${row.quorum} approvals: an answer to it must say who gives it (identity or answeredBy)`,
        { tokens: [token] },
      );
    }
    const counted =
      rowsOf(
        // clock_timestamp(): taken under the row lock, so `at` orders them as they counted.
        await tx.execute(sql`insert into aura.approvals (token, operator, action, content, at)
          values (${token}, ${who}, ${answer.action}, ${answer.content}, clock_timestamp())
          on conflict (token, operator) do nothing returning operator`),
      ).length > 0;
    const given = rowsOf(
      await tx.execute(sql`select operator, action from aura.approvals where token = ${token}
        order by at, operator`),
    );
    const of = (action: string) =>
      given.filter((g) => g.action === action).map((g) => String(g.operator));
    const quorum = {
      approvals: of('accept'),
      declines: of('decline'),
      needed: Number(row.quorum),
      declinesNeeded: Number(row.quorum_declines ?? 1),
      counted,
    };
    const resolves =
      counted &&
      (answer.action === 'cancel' ||
        (answer.action === 'accept' && quorum.approvals.length >= quorum.needed) ||
        (answer.action === 'decline' && quorum.declines.length >= quorum.declinesNeeded));
    if (resolves) {
      await tx.execute(sql`update aura.paused_states set resumed_at = now(),
          resumed_answer = ${JSON.stringify(answer)}::jsonb, answered_by = ${who}
        where token = ${token} and resumed_at is null`);
    }
    if (key !== undefined) {
      const chain = conversationChain(String(row.conversation_id));
      const entries: NewEntry[] = [
        counted
          ? {
              chain,
              kind: 'approval-recorded',
              token,
              data: {
                ...answerData,
                approvals: quorum.approvals.length,
                declines: quorum.declines.length,
                needed: quorum.needed,
                declinesNeeded: quorum.declinesNeeded,
              },
            }
          : { chain, kind: 'answer-refused', token, data: { ...answerData, reason: 'counted' } },
      ];
      if (resolves) entries.push({ chain, kind: 'question-answered', token, data: answerData });
      await appendEntries(tx, key, entries);
    }
    return { resolved: resolves, quorum };
  });
}

function isTrue(value: unknown): boolean {
  return value === true || value === 't';
}
