// Internal: the answer to a question that needs a quorum (M distinct approvals of its
// audience): each person's answer is recorded once, and the one that completes the quorum
// resolves the question, in the same transaction.
import { rowsOf } from '@x/postgres-kit';
import { type SQL, sql } from 'drizzle-orm';
import type { ResumeAnswer } from './answer.js';
import { answeredColumns, answeredJson, answeredOf } from './answered.js';
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

/** The values of an approval, as SQL (parameters, or a prepared statement's placeholders). */
export interface ApprovalValues {
  token: SQL;
  action: SQL;
  content: SQL;
  /** The answer as jsonb, recorded when this approval resolves the question. */
  answer: SQL;
  /** Who gives it (text). */
  who: SQL;
  /** The condition that the question's audience admits who gives it (`p` is the row). */
  admitted: SQL;
}

/** The pending question `token` with a quorum, under the alias `p`, before its deadline. */
const pendingWithQuorum = (token: SQL) => sql`p.token = ${token} and p.quorum is not null
    and p.resumed_at is null and (p.deadline_at is null or p.deadline_at > now())`;

/**
 * The common table expressions `u` and `recorded` of an approval: one UPDATE counts it on the
 * row it locks (a concurrent approval's count is re-read once its lock is released), resolves
 * the question at the quorum, and records the answer; `u` returns the row (and the question's
 * wait, as {@link answeredColumns} and {@link answeredJson}), none when not counted.
 */
export function approvalSql(v: ApprovalValues): SQL {
  const resolves = sql`(${v.action} = 'cancel'
    or (${v.action} = 'accept' and cardinality(p.approvers) + 1 >= p.quorum)
    or (${v.action} = 'decline' and cardinality(p.decliners) + 1 >= coalesce(p.quorum_declines, 1)))`;
  return sql`u as (
      update aura.paused_states p set
        approvers = case when ${v.action} = 'accept' then p.approvers || ${v.who} else p.approvers end,
        decliners = case when ${v.action} = 'decline' then p.decliners || ${v.who} else p.decliners end,
        approved_content = case when ${v.action} = 'accept' then coalesce(p.approved_content, ${v.content}) else p.approved_content end,
        resumed_at = case when ${resolves} then now() end,
        resumed_answer = case when ${resolves} then ${v.answer} end,
        answered_by = case when ${resolves} then ${v.who} end
      where ${pendingWithQuorum(v.token)} and ${v.admitted}
        and not (${v.who} = any(p.approvers) or ${v.who} = any(p.decliners))
        and (${v.action} <> 'accept' or p.approved_content is null or p.approved_content = ${v.content})
      returning ${answeredColumns}, p.quorum, p.quorum_declines, p.resumed_at is not null as resolved,
        array_to_json(p.approvers)::text as approvers, array_to_json(p.decliners)::text as decliners,
        case when p.resumed_at is not null then ${answeredJson} end as question
    ), recorded as (
      insert into aura.approvals (token, operator, action, content, at)
      select ${v.token}, ${v.who}, ${v.action}, ${v.content}, clock_timestamp() from u
    )`;
}

/**
 * Records one person's answer to a pending question with a quorum and resolves the question
 * when it completes the quorum (the M-th distinct accept, or the declines a policy needs; a
 * cancel resolves it at once). The count lives on the question's row, updated by the one
 * statement that records the answer, so concurrent answers count one after the other and
 * exactly one of them resolves it.
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
  const who = c.answeredBy;
  const admitted =
    c.identity === undefined
      ? sql`true`
      : admits(sql`${c.identity.name}`, textArray(c.identity.roles ?? []));
  const answerOnce = sql`with ${approvalSql({
    token: sql`${token}`,
    action: sql`${answer.action}::text`,
    content: sql`${answer.content}::text`,
    answer: sql`${JSON.stringify(answer)}::jsonb`,
    who: sql`${who}::text`,
    admitted,
  })} select * from u`;
  const { action } = answer;
  const pending = pendingWithQuorum(sql`${token}`);
  const write = async (tx: AskUserDatabase): Promise<AnswerOutcome | undefined> => {
    if (who === null) {
      const [needs] = rowsOf(
        await tx.execute(sql`select p.quorum from aura.paused_states p where ${pending}`),
      );
      if (needs === undefined) return undefined;
      throw new AskUserError(
        'invalid_argument',
        `question ${JSON.stringify(token)} needs ${needs.quorum} approvals: an answer to it must say who gives it (identity or answeredBy)`,
        { tokens: [token] },
      );
    }
    const [row] = rowsOf(await tx.execute(answerOnce));
    // Not counted: that person answered already (then what stands), or it takes no answer.
    const counted = row !== undefined;
    const current =
      row ??
      rowsOf(
        await tx.execute(sql`select p.conversation_id, p.quorum, p.quorum_declines, false as resolved,
            array_to_json(p.approvers)::text as approvers, array_to_json(p.decliners)::text as decliners,
            p.approved_content, ${who}::text = any(p.approvers) or ${who}::text = any(p.decliners) as answered
          from aura.paused_states p where ${pending} and ${admitted}`),
      )[0];
    if (current === undefined) return undefined;
    // Approvals of a quorum approve one thing (e.g. the same edited arguments): another is refused.
    if (!counted && !isTrue(current.answered) && action === 'accept') {
      throw new AskUserError(
        'invalid_answer',
        `question ${JSON.stringify(token)} was approved so far with other content (${JSON.stringify(current.approved_content)}): the approvals of a quorum must accept the same, or decline`,
        { tokens: [token] },
      );
    }
    const quorum = quorumOf(current, counted);
    const resolved = isTrue(current.resolved);
    if (key !== undefined) {
      const chain = conversationChain(String(current.conversation_id));
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
      if (resolved) entries.push({ chain, kind: 'question-answered', token, data: answerData });
      await appendEntries(tx, key, entries);
    }
    // The last approval returns the question's wait, as a lone answer's UPDATE does.
    const question =
      resolved && typeof current.question === 'string' ? current.question : undefined;
    return {
      resolved,
      quorum,
      ...(question ? { question: answeredOf(JSON.parse(question)) } : {}),
    };
  };
  // Without an audit log the one statement needs no transaction of its own.
  return key === undefined ? write(db) : inTransaction(db, write);
}

/** The quorum's count in a row of {@link approvalSql}'s `u` (or a read of the same columns). */
export function quorumOf(
  row: Record<string, unknown>,
  counted: boolean,
): NonNullable<AnswerOutcome['quorum']> {
  return {
    approvals: JSON.parse(String(row.approvers)) as string[],
    declines: JSON.parse(String(row.decliners)) as string[],
    needed: Number(row.quorum),
    declinesNeeded: Number(row.quorum_declines ?? 1),
    counted,
  };
}

/** A boolean column as either driver returns it. */
export function isTrue(value: unknown): boolean {
  return value === true || value === 't';
}
