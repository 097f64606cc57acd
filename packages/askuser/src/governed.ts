// Internal: the writes of a store with an audit key or an identity: each in one transaction
// with the audit entries it produces.
import {
  type Pipeline,
  type PreparedRow,
  pipelinedTransaction,
  prepareOnce,
  rowsOf,
  runPrepared,
} from '@x/postgres-kit';
import { type SQL, sql } from 'drizzle-orm';
import type { ResumeAnswer } from './answer.js';
import { answeredColumns } from './answered.js';
import { admits, type Identity, identityKeys, textArray } from './audience.js';
import {
  appendEntries,
  appendEntry,
  conversationChain,
  headOf,
  inTransaction,
  lockHead,
  type NewEntry,
  signedEntries,
} from './audit-chain.js';
import { ASKUSER_ANSWERED_CHANNEL } from './channels.js';
import type { AskUserDatabase } from './database.js';
import { AskUserError, pauseExpired, pauseNotFound } from './errors.js';
import { audienceGone, notified } from './pause-write.js';
import { answerQuorum, approvalSql, isTrue, quorumOf } from './quorum.js';
import { pausedStates as t } from './schema.js';
import type { AnswerOutcome } from './types.js';
import { marked } from './write-mark.js';

/** True for a pause whose deadline refuses an answer: applied already, or passed while pending. */
export const expiredNow = sql`(${t.expiredAt} is not null or (${t.resumedAt} is null and ${t.deadlineAt} <= now()))`;

/**
 * The answer, with an identity check (skipped when `name` is null) unless `none`, compiled
 * once per process: `audited` also locks the conversation's chain head and returns it as `seq:hash`.
 * Times come as epoch milliseconds and arrays and JSON as text, the same from every driver.
 */
function answerStatement(check: 'none' | 'identity' | 'audited') {
  return prepareOnce(() => answerSql(check));
}

/** The SQL of {@link answerStatement}. */
function answerSql(check: 'none' | 'identity' | 'audited'): SQL {
  const head = check === 'audited' ? sql`, head` : sql``;
  return sql`with ${answerCtes(check)} select ${answeredNames}${head} from resolved r
    where ${notified(ASKUSER_ANSWERED_CHANNEL)}`;
}

/** The columns of {@link answeredColumns}, by name. */
const answeredNames = sql`conversation_id, tool_call_id, kind, priority, created_ms, resumed_ms,
  audience_names, audience_roles, resume_context`;

/**
 * The common table expressions of an answer: `resolved`, the UPDATE (marked, so that the
 * answer triggers skip its row), and `gone`, the work of those triggers but the notification,
 * which the statement's condition {@link notified} sends for each row of `resolved`.
 */
function answerCtes(check: 'none' | 'identity' | 'audited'): SQL {
  const p = sql.placeholder;
  const admitted =
    check === 'none'
      ? sql``
      : sql` and (${p('name')}::text is null or (${admits(
          sql`${p('name')}`,
          sql`array(select jsonb_array_elements_text(${p('roles')}::jsonb))`,
        )}))`;
  return sql`resolved as (update aura.paused_states p
      set resumed_at = now(), resumed_answer = ${p('answer')}::jsonb,
        answered_by = ${marked('aura.pause_write', sql`'answer:' || p.token`, sql`${p('answeredBy')}::text`)}
      where p.token = ${p('token')} and p.resumed_at is null
        and (p.deadline_at is null or p.deadline_at > now()) and p.quorum is null${admitted}
      returning ${answeredColumns}, p.token, p.has_audience${
        check === 'audited'
          ? sql`,
        (select h.seq::text || ':' || h.hash from aura.audit_heads h
          where h.chain = 'conversation:' || p.conversation_id for update) as head`
          : sql``
      }), ${audienceGone}`;
}
/** The plain answer: no identity, no audit log (one autocommit UPDATE). */
export const answerPlain = answerStatement('none');
const answerAudited = answerStatement('audited');

/**
 * The checked answer, and in the same statement the approval of a question with a quorum
 * (which the answer's UPDATE leaves alone): one round trip either way, as a quorum
 * approval is no rarer than a lone answer where quorums are used. A row with `quorum`
 * null is a lone answer's; no row means neither took it (refused, or counted already).
 */
const answerOrApproval = prepareOnce(() => {
  const p = sql.placeholder;
  const approval = approvalSql({
    token: sql`${p('token')}::text`,
    action: sql`${p('action')}::text`,
    content: sql`${p('content')}::text`,
    answer: sql`${p('answer')}::jsonb`,
    who: sql`${p('answeredBy')}::text`,
    admitted: sql`(${p('name')}::text is null or (${admits(
      sql`${p('name')}`,
      sql`array(select jsonb_array_elements_text(${p('roles')}::jsonb))`,
    )}))`,
  });
  return sql`with ${answerCtes('identity')}, ${approval}
    select ${answeredNames}, null::int as quorum, null::int as quorum_declines, true as resolved,
      null::text as approvers, null::text as decliners
    from resolved r where ${notified(ASKUSER_ANSWERED_CHANNEL)}
    union all
    select u.conversation_id, u.tool_call_id, u.kind, u.priority, u.created_ms, u.resumed_ms,
      u.audience_names, u.audience_roles, u.resume_context, u.quorum, u.quorum_declines,
      u.resolved, u.approvers, u.decliners
    from u`;
});

/** The outcome of an {@link answerOrApproval} row. */
function answerOrApprovalOutcome(row: PreparedRow): AnswerOutcome {
  const answered = resolvedBy(answeredRow(row));
  if (row.quorum === null || row.quorum === undefined) return answered;
  const resolved = isTrue(row.resolved);
  return {
    resolved,
    quorum: quorumOf(row, true),
    ...(resolved ? { question: answered.question } : {}),
  };
}

/** The question an answer statement resolved, from its driver-neutral row. */
export function answeredRow(row: PreparedRow) {
  const context = row.resume_context;
  return {
    conversationId: String(row.conversation_id),
    toolCallId: String(row.tool_call_id),
    kind: String(row.kind),
    priority: Number(row.priority),
    createdAt: new Date(Number(row.created_ms)),
    resumedAt: new Date(Number(row.resumed_ms)),
    audienceNames: JSON.parse(String(row.audience_names)) as string[],
    audienceRoles: JSON.parse(String(row.audience_roles)) as string[],
    resumeContext: typeof context === 'string' ? (JSON.parse(context) as unknown) : null,
  };
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
  const params = answerParams(token, answer, c);
  // Not resolved by one answer: recorded towards its quorum, or refused.
  const otherwise = async (tx: AskUserDatabase) =>
    (await answerQuorum(tx, key, token, answer, c, answerData(token, answer, c))) ??
    refusalOf(tx, key, token, answer, c);
  let outcome: AnswerOutcome | AskUserError | undefined;
  if (key === undefined) {
    const run: Pipeline['run'] = (statement, values) => runPrepared(db, statement, values);
    outcome = (await answerInPipeline(run, key, token, answer, c)) ?? (await otherwise(db));
  } else {
    // BEGIN goes with the answer, which locks the chain head; the entry goes with COMMIT.
    outcome = await pipelinedTransaction(db, (tx) =>
      answerInPipeline(tx.run, key, token, answer, c),
    );
    // Not resolved by one answer (a quorum, a refusal): again, with the general path's reads.
    outcome ??= await inTransaction(db, async (tx) => {
      const again = await answerAppended(
        (statement, values) => runPrepared(tx, statement, values),
        key,
        token,
        answer,
        params,
        c,
      );
      if (again === undefined) return otherwise(tx);
      await again.appended;
      return again.outcome;
    });
  }
  if (outcome instanceof AskUserError) throw outcome;
  return outcome;
}

/**
 * The answer in one statement (with a key: and its signed entry, sent without waiting, so
 * that it goes out with what the pipeline sends next), or undefined when that statement did
 * not take it: refused, answered already, or an approval towards a quorum with a key, which
 * {@link resolveGoverned} records with the reads it needs. Without a key the statement also
 * records a quorum's approval.
 */
export async function answerInPipeline(
  run: Pipeline['run'],
  key: Buffer | undefined,
  token: string,
  answer: ResumeAnswer,
  c: AnswerContext,
): Promise<AnswerOutcome | undefined> {
  const params = answerParams(token, answer, c);
  if (key !== undefined) return (await answerAppended(run, key, token, answer, params, c))?.outcome;
  const [row] = await run(answerOrApproval, {
    ...params,
    action: answer.action,
    content: answer.content,
  });
  return row === undefined ? undefined : answerOrApprovalOutcome(row);
}

/** The values of the answer statements. */
function answerParams(token: string, answer: ResumeAnswer, c: AnswerContext) {
  return {
    token,
    answer: JSON.stringify(answer),
    answeredBy: c.answeredBy,
    name: c.identity?.name ?? null,
    roles: JSON.stringify(c.identity?.roles ?? []),
  };
}

/**
 * The audited answer: the UPDATE (which locks the chain head), then the signed entry, sent
 * without waiting (`appended`); undefined when the UPDATE resolved nothing.
 */
async function answerAppended(
  run: Pipeline['run'],
  key: Buffer,
  token: string,
  answer: ResumeAnswer,
  params: Record<string, unknown>,
  c: AnswerContext,
): Promise<{ outcome: AnswerOutcome; appended: Promise<unknown> } | undefined> {
  const [row] = await run(answerAudited, params);
  if (row === undefined) return undefined;
  const resolved = answeredRow(row);
  const chain = conversationChain(resolved.conversationId);
  const [seq, hash] = typeof row.head === 'string' ? row.head.split(':') : [];
  // A chain without a head row yet (its questions were asked without a key) gets one first.
  const head =
    seq === undefined || hash === undefined
      ? headOf((await run(lockHead, { chain }))[0])
      : { chain, seq: Number(seq), hash };
  const [entry] = signedEntries(key, head, [
    { chain, kind: 'question-answered', token, data: answerData(token, answer, c) },
  ]);
  return { outcome: resolvedBy(resolved), appended: run(appendEntry, entry ?? {}) };
}

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
 * identity may answer: per audience key it matches, an ordered read of `pending_audience`,
 * and for the questions open to anyone (no such rows), one of the pending FIFO index.
 */
export function answerableBy(identity: Identity, limit: number): SQL {
  const own = (q: string) =>
    sql`not (${sql.raw(q)}.requester_may_not_answer and ${sql.raw(q)}.requester is not distinct from ${identity.name}::text)`;
  return sql`${t.token} in (select x.token from unnest(${textArray(identityKeys(identity))}) as k(key)
    cross join lateral (select a.token from aura.pending_audience a
      join aura.paused_states q on q.token = a.token
      where a.audience_key = k.key and ${own('q')}
      order by a.priority desc, a.created_at, a.token limit ${limit}) x
    union all (select o.token from aura.paused_states o
      where o.resumed_at is null and not o.has_audience and ${own('o')}
      order by o.priority desc, o.created_at, o.token limit ${limit}))`;
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
