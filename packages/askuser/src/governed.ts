// Internal: the writes of a store with an audit key or an identity: each in one transaction
// with the audit entries it produces.
import { lazyStatements, rowsOf } from '@x/postgres-kit';
import { and, eq, isNull, type SQL, sql } from 'drizzle-orm';
import type { ResumeAnswer } from './answer.js';
import { admits, type Identity, identityKeys, textArray } from './audience.js';
import { appendEntries, conversationChain, inTransaction, type NewEntry } from './audit-chain.js';
import type { AskUserDatabase } from './database.js';
import { AskUserError, pauseExpired, pauseNotFound } from './errors.js';
import { answerQuorum } from './quorum.js';
import { pausedStates as t } from './schema.js';
import type { AnswerOutcome } from './types.js';

/** True for a pause whose deadline refuses an answer: applied already, or passed while pending. */
export const expiredNow = sql`(${t.expiredAt} is not null or (${t.resumedAt} is null and ${t.deadlineAt} <= now()))`;

/** The prepared answers with an identity check (skipped when `name` is null). */
function answerStatements(db: AskUserDatabase) {
  const p = sql.placeholder;
  const admitted = sql`(${p('name')}::text is null or (${admits(
    sql`${p('name')}`,
    sql`array(select jsonb_array_elements_text(${p('roles')}::jsonb))`,
    {
      names: t.audienceNames,
      roles: t.audienceRoles,
      requester: t.requester,
      barred: t.requesterMayNotAnswer,
    },
  )}))`;
  const update = () =>
    db
      .update(t)
      .set({
        resumedAt: sql`now()`,
        resumedAnswer: p('answer'),
        answeredBy: sql`${p('answeredBy')}`,
      })
      .where(
        and(
          eq(t.token, p('token')),
          isNull(t.resumedAt),
          sql`(${t.deadlineAt} is null or ${t.deadlineAt} > now()) and ${t.quorum} is null`,
          admitted,
        ),
      );
  return lazyStatements({
    answer: () => update().returning(answeredColumns).prepare('askuser_answer_checked'),
    answerAudited: () =>
      update()
        .returning({
          ...answeredColumns,
          // Written out: drizzle leaves RETURNING's columns unqualified.
          head: sql<
            string | null
          >`(select h.seq::text || ':' || h.hash from aura.audit_heads h where h.chain = 'conversation:' || "aura"."paused_states"."conversation_id" for update)`,
        })
        .prepare('askuser_answer_audited'),
  });
}

// Built once per database or transaction handle, on first use.
const built = new WeakMap<AskUserDatabase, ReturnType<typeof answerStatements>>();
function statementsOf(db: AskUserDatabase) {
  let statements = built.get(db);
  if (statements === undefined) {
    statements = answerStatements(db);
    built.set(db, statements);
  }
  return statements;
}

/** The parsed options of an answer. */
export interface AnswerContext {
  answeredBy: string | null;
  identity: Identity | undefined;
  signedInWith: string | undefined;
  channel: string | undefined;
  shownDigest: string | undefined;
}

/** What an answer's audit entry records of it. */
export function answerData(token: string, answer: ResumeAnswer, c: AnswerContext) {
  return {
    token,
    action: answer.action,
    content: answer.content,
    by: c.answeredBy,
    roles: c.identity?.roles ?? null,
    signedInWith: c.signedInWith ?? null,
    channel: c.channel ?? null,
    shownDigest: c.shownDigest ?? null,
  };
}

/**
 * Resolves one pause, refusing an identity its audience does not admit in the same UPDATE
 * that records the answer. With a key, the answer (or its refusal) is appended to the
 * conversation's chain in the same transaction; a refusal is committed with it, then thrown.
 */
export async function resolveGoverned(
  db: AskUserDatabase,
  key: Buffer | undefined,
  token: string,
  answer: ResumeAnswer,
  c: AnswerContext,
): Promise<AnswerOutcome> {
  const run = async (tx: AskUserDatabase): Promise<AnswerOutcome | AskUserError> => {
    const statements = statementsOf(tx);
    const params = {
      token,
      answer,
      answeredBy: c.answeredBy,
      name: c.identity?.name ?? null,
      roles: JSON.stringify(c.identity?.roles ?? []),
    };
    // Not resolved by one answer: recorded towards its quorum, or refused.
    const otherwise = async () =>
      (await answerQuorum(tx, key, token, answer, c, answerData(token, answer, c))) ??
      refusalOf(tx, key, token, answer, c);
    if (key === undefined) {
      const [updated] = await statements.answer.execute(params);
      return updated === undefined ? otherwise() : resolvedBy(updated);
    }
    // The same statement locks the conversation's chain head (when the chain has one).
    const [updated] = await statements.answerAudited.execute(params);
    if (updated === undefined) return otherwise();
    const chain = conversationChain(updated.conversationId);
    const [seq, hash] = updated.head?.split(':') ?? [];
    await appendEntries(
      tx,
      key,
      [{ chain, kind: 'question-answered', token, data: answerData(token, answer, c) }],
      seq === undefined || hash === undefined ? undefined : { chain, seq: Number(seq), hash },
    );
    return resolvedBy(updated);
  };
  const outcome = key === undefined ? await run(db) : await inTransaction(db, run);
  if (outcome instanceof AskUserError) throw outcome;
  return outcome;
}

/** What an answer's UPDATE returns of the question it resolved: {@link AnswerOutcome.question}. */
export const answeredColumns = {
  conversationId: t.conversationId,
  toolCallId: t.toolCallId,
  kind: t.kind,
  priority: t.priority,
  createdAt: t.createdAt,
  resumedAt: t.resumedAt,
  audienceNames: t.audienceNames,
  audienceRoles: t.audienceRoles,
  resumeContext: t.resumeContext,
};

/** The outcome of an answer that resolved its question by itself, from the row it returned. */
export function resolvedBy(row: {
  conversationId: string;
  toolCallId: string;
  kind: string;
  priority: number;
  createdAt: Date;
  resumedAt: Date | null;
  audienceNames: string[];
  audienceRoles: string[];
  resumeContext: unknown;
}): AnswerOutcome {
  return {
    resolved: true,
    question: {
      conversationId: row.conversationId,
      toolCallId: row.toolCallId,
      kind: row.kind,
      priority: row.priority,
      createdAt: row.createdAt,
      // Set by the same UPDATE: never null on a row it resolved.
      resumedAt: row.resumedAt ?? new Date(),
      audience: { names: row.audienceNames, roles: row.audienceRoles },
      resumeContext: row.resumeContext,
    },
  };
}

/** Why an answer was refused (a new statement sees what a concurrent winner committed), recorded with a key. */
async function refusalOf(
  tx: AskUserDatabase,
  key: Buffer | undefined,
  token: string,
  answer: ResumeAnswer,
  c: AnswerContext,
): Promise<AskUserError> {
  const [row] = rowsOf(
    await tx.execute(sql`select p.conversation_id, p.resumed_at is not null as resolved,
          (p.expired_at is not null or (p.resumed_at is null and p.deadline_at <= now())) as expired,
          ${c.identity === undefined ? sql`true` : admits(sql`${c.identity.name}`, textArray(c.identity.roles ?? []))} as admitted,
          p.requester_may_not_answer and p.requester is not distinct from ${c.identity?.name ?? null}::text as own
        from aura.paused_states p where p.token = ${token}`),
  );
  if (row === undefined) return pauseNotFound([token]);
  const resolved = row.resolved === true;
  const expired = row.expired === true;
  const refusal = expired
    ? pauseExpired([token])
    : resolved
      ? pauseNotFound([token])
      : row.own === true
        ? forbidden(token, `${c.identity?.name} asked for it, and its requester may not answer it`)
        : row.admitted !== true
          ? forbidden(token, `its audience does not include ${c.identity?.name} or their roles`)
          : pauseNotFound([token]);
  if (key !== undefined && (resolved || refusal.code !== 'not_found')) {
    await appendEntries(tx, key, [
      {
        chain: conversationChain(String(row.conversation_id)),
        kind: 'answer-refused',
        token,
        data: {
          ...answerData(token, answer, c),
          reason: expired ? 'expired' : resolved ? 'already_answered' : 'forbidden',
        },
      },
    ]);
  }
  return refusal;
}

function forbidden(token: string, why: string): AskUserError {
  return new AskUserError(
    'forbidden',
    `the answer to ${JSON.stringify(token)} was refused: ${why}; nothing was changed`,
    { tokens: [token] },
  );
}

/**
 * The condition that a pending pause is among the first `limit` in FIFO order that the
 * identity may answer: per audience key it matches, an ordered read of `pending_audience`.
 */
export function answerableBy(identity: Identity, limit: number): SQL {
  return sql`${t.token} in (select x.token from unnest(${textArray(identityKeys(identity))}) as k(key)
    cross join lateral (select a.token from aura.pending_audience a
      join aura.paused_states q on q.token = a.token
      where a.audience_key = k.key
        and not (q.requester_may_not_answer and q.requester is not distinct from ${identity.name}::text)
      order by a.priority desc, a.created_at, a.token limit ${limit}) x)`;
}

/** Appends entries in `db`'s (sub)transaction after `write`, or only writes without a key. */
export async function withEntries<T>(
  db: AskUserDatabase,
  key: Buffer | undefined,
  write: (tx: AskUserDatabase) => Promise<T>,
  entriesOf: (result: T) => NewEntry[],
): Promise<T> {
  if (key === undefined) return write(db);
  return inTransaction(db, async (tx) => {
    const result = await write(tx);
    const entries = entriesOf(result);
    if (entries.length > 0) await appendEntries(tx, key, entries);
    return result;
  });
}
