import {
  jsonParameter,
  type Pipeline,
  prepareOnce,
  retryRead,
  rowsOf,
  runPrepared,
  statementBuilder,
  unstorableText,
} from '@x/postgres-kit';
import { and, asc, desc, eq, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import {
  ACTION_CANCEL,
  AUTO_TERMINATED_MARKER,
  actions,
  type ResumeAnswer,
  resumeAnswerSchema,
} from './answer.js';
import { answeredJson, answeredOf } from './answered.js';
import { type Identity, identitySchema } from './audience.js';
import type { AuditKey } from './audit.js';
import { conversationChain, keyBytes } from './audit-chain.js';
import { ASKUSER_CREATED_CHANNEL } from './channels.js';
import type { AskUserDatabase } from './database.js';
import { applyDue } from './due.js';
import { AskUserError, pauseExpired, pauseNotFound, wrapDatabaseError } from './errors.js';
import {
  type AnswerContext,
  answerableBy,
  answerData,
  answeredRow,
  answerInPipeline,
  answerPlain,
  expiredNow,
  resolvedBy,
  resolveGoverned,
  withEntries,
} from './governed.js';
import { audienceKeys, notified } from './pause-write.js';
import { columns, type Row, toAnswered, toPending, toRecord } from './projection.js';
import { answerQuorum } from './quorum.js';
import { approvals, pausedStates as t } from './schema.js';
import {
  type AnsweredPause,
  type AnsweredQuestion,
  type AnswerOptions,
  type AnswerOutcome,
  type Approval,
  answerOptionsSchema,
  type CleanupOptions,
  type DueOutcome,
  type InsertOptions,
  type InsertPauseParams,
  insertPauseParamsSchema,
  type ListAnsweredOptions,
  type MarkResumedOptions,
  markResumedOptionsSchema,
  type PauseRecord,
  type Pending,
  type PendingCount,
  type ResumeAnswers,
} from './types.js';
import { marked } from './write-mark.js';

/** Options of {@link AskUserStore}. */
export interface AskUserStoreOptions {
  /** Append every write's audit entries, signed with this key (kept outside the database). */
  audit?: { key: AuditKey };
}

/** Rows `listPending` / `listPendingAll` / `listAnswered` return when no limit is given. */
export const DEFAULT_PENDING_LIMIT = 100;
/** Rows `listRecent` returns when no limit is given. */
export const DEFAULT_RECENT_LIMIT = 50;

const fifo = [desc(t.priority), asc(t.createdAt), asc(t.token)];

// The insert is compiled once per process (as the answers are, in governed.ts) and run as a
// named prepared statement on the handle it is given: building a drizzle query costs more
// than running it, and a store is made per transaction. PGlite ignores the name; a
// `prepare: false` client wins. It does what the insert triggers would (they skip its row):
// it notifies and, for a question with an audience, writes its pending_audience rows.
const insertPause = insertStatement(false);
const insertPauseWithAudience = insertStatement(true);

function insertStatement(withAudience: boolean) {
  return prepareOnce(() => {
    const p = sql.placeholder;
    const insert = statementBuilder
      .insert(t)
      .values({
        token: marked(
          'aura.pause_write',
          sql`'insert:' || ${p('token')}::text`,
          sql`${p('token')}::text`,
        ),
        conversationId: p('conversationId'),
        kind: p('kind'),
        question: p('question'),
        // JSON text or null, passed as is: drizzle would encode a null as the JSON `null`.
        options: sql`${p('options')}`,
        priority: p('priority'),
        toolCallId: p('toolCallId'),
        resumeContext: sql`${p('resumeContext')}`,
        proxiedFromChildId: p('proxiedFromChildId'),
        proxiedToolCallId: p('proxiedToolCallId'),
        audienceNames: sql`array(select jsonb_array_elements_text(${p('audienceNames')}::jsonb))`,
        audienceRoles: sql`array(select jsonb_array_elements_text(${p('audienceRoles')}::jsonb))`,
        requester: sql`${p('requester')}`,
        requesterMayNotAnswer: p('requesterMayNotAnswer'),
        deadlineAt: sql`coalesce(${p('deadlineAt')}::timestamptz, now() + ${p('deadlineInMs')}::float8 * interval '1 millisecond')`,
        deadlineAnswer: sql`${p('deadlineAnswer')}::jsonb`,
        remindAt: sql`coalesce(${p('remindAt')}::timestamptz, now() + ${p('remindInMs')}::float8 * interval '1 millisecond')`,
        escalateAt: sql`coalesce(${p('escalateAt')}::timestamptz, now() + ${p('escalateInMs')}::float8 * interval '1 millisecond')`,
        escalateNames: sql`array(select jsonb_array_elements_text(${p('escalateNames')}::jsonb))`,
        escalateRoles: sql`array(select jsonb_array_elements_text(${p('escalateRoles')}::jsonb))`,
        quorum: sql`${p('quorum')}::integer`,
        quorumDeclines: sql`${p('quorumDeclines')}::integer`,
      })
      .returning({
        token: t.token,
        priority: t.priority,
        createdAt: t.createdAt,
        audienceNames: t.audienceNames,
        audienceRoles: t.audienceRoles,
      })
      .getSQL();
    const audience = withAudience
      ? sql`, audience as (insert into aura.pending_audience (audience_key, priority, created_at, token)
          select distinct k, p.priority, p.created_at, p.token from r p, ${audienceKeys} k)`
      : sql``;
    return sql`with r as (${insert})${audience} select ${notified(ASKUSER_CREATED_CHANNEL)} from r`;
  });
}

/**
 * The store of pending human questions over `aura.paused_states` (run {@link migrate}
 * first). It persists pauses and their answers; orchestration (what to do with an
 * answer) is the caller's. There is no timeout or expiry: a pause is resolved only by
 * `markResumed`, `markResumedBatch` or `autoResolveForConversation`.
 *
 * Every write is a single conditional statement, so each pause is resolved exactly once
 * even when several processes answer at the same time.
 *
 * @example
 * const store = new AskUserStore(db); // db or a transaction handle
 * await store.insert({ token: 'int-1', conversationId: 'c1', kind: 'ask_user',
 *   question: 'Deploy now?', toolCallId: 'call_1' });
 * const [next] = await store.listPendingAll();
 * await store.markResumed(next!.token, { action: 'accept', content: 'yes' });
 */
export class AskUserStore {
  readonly #db: AskUserDatabase;
  readonly #key: Buffer | undefined;

  /**
   * @param db a drizzle database (postgres.js or PGlite) or a transaction handle.
   * @param options `audit.key`: with it every write also appends its audit entries, in the
   *   same transaction (`db`'s when it is a transaction handle); see the README's audit log.
   * @throws {AskUserError} `invalid_argument` for an audit key under 16 bytes.
   */
  constructor(db: AskUserDatabase, options: AskUserStoreOptions = {}) {
    this.#db = db;
    this.#key = options.audit === undefined ? undefined : keyBytes(options.audit.key);
  }

  /**
   * Persists one pending pause. `options` / `resumeContext` null or omitted → SQL NULL;
   * a null (or `''`) child id and an empty proxied tool-call id → SQL NULL.
   * @throws {AskUserError} `invalid_pause` for malformed fields, `duplicate` when the token exists.
   */
  async insert(params: InsertPauseParams, options: InsertOptions = {}): Promise<void> {
    const parsed = insertPauseParamsSchema.safeParse(params);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new AskUserError(
        'invalid_pause',
        `invalid pause field ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
        { cause: parsed.error },
      );
    }
    const p = parsed.data;
    const audience = { names: p.audience?.names ?? [], roles: p.audience?.roles ?? [] };
    const requester = p.requester ?? null;
    const requesterMayNotAnswer = p.requesterMayNotAnswer ?? false;
    const deadline = p.deadline ?? null;
    const remind = p.remind ?? null;
    const escalate = p.escalate ?? null;
    // A quorum of one approval and one decline is the plain first answer: stored as none.
    const quorum =
      p.quorum && (p.quorum.approvals > 1 || (p.quorum.declines ?? 1) > 1) ? p.quorum : null;
    try {
      const withAudience = audience.names.length > 0 || audience.roles.length > 0;
      const write = (tx: AskUserDatabase) =>
        runPrepared(tx, withAudience ? insertPauseWithAudience : insertPause, {
          token: p.token,
          conversationId: p.conversationId,
          kind: p.kind,
          question: p.question,
          options: jsonParameter(p.options),
          priority: p.priority ?? 0,
          toolCallId: p.toolCallId,
          resumeContext: jsonParameter(p.resumeContext),
          proxiedFromChildId: p.proxiedFromChildId || null,
          proxiedToolCallId: p.proxiedToolCallId || null,
          audienceNames: JSON.stringify(audience.names),
          audienceRoles: JSON.stringify(audience.roles),
          requester,
          requesterMayNotAnswer,
          deadlineAt: deadline?.at?.toISOString() ?? null,
          deadlineInMs: deadline?.inMs ?? null,
          deadlineAnswer: deadline === null ? null : JSON.stringify(deadline.answer),
          remindAt: remind?.at?.toISOString() ?? null,
          remindInMs: remind?.inMs ?? null,
          escalateAt: escalate?.at?.toISOString() ?? null,
          escalateInMs: escalate?.inMs ?? null,
          escalateNames: JSON.stringify(escalate?.names ?? []),
          escalateRoles: JSON.stringify(escalate?.roles ?? []),
          quorum: quorum?.approvals ?? null,
          quorumDeclines: quorum === null ? null : (quorum.declines ?? 1),
        });
      await withEntries(this.#db, this.#key, write, () => [
        {
          chain: conversationChain(p.conversationId),
          kind: 'question-created',
          token: p.token,
          data: {
            token: p.token,
            conversationId: p.conversationId,
            kind: p.kind,
            question: p.question,
            toolCallId: p.toolCallId,
            runId: options.runId ?? null,
            argumentsDigest: options.argumentsDigest ?? null,
            // Only when given: the entries of other questions stay as they were.
            ...(options.arguments === undefined ? {} : { arguments: options.arguments }),
            audience,
            requester,
            requesterMayNotAnswer,
            // Only when set: the entries of questions without one stay as they were.
            ...(deadline === null
              ? {}
              : {
                  deadline: {
                    at: deadline.at?.toISOString() ?? null,
                    inMs: deadline.inMs ?? null,
                    answer: deadline.answer,
                  },
                }),
            ...(remind === null ? {} : { remind: timeOf(remind) }),
            ...(escalate === null
              ? {}
              : {
                  escalate: {
                    ...timeOf(escalate),
                    names: escalate.names ?? [],
                    roles: escalate.roles ?? [],
                  },
                }),
            ...(quorum === null
              ? {}
              : { quorum: { approvals: quorum.approvals, declines: quorum.declines ?? 1 } }),
          },
        },
      ]);
    } catch (error) {
      throw wrapDatabaseError(error, 'insert', p.token, 'invalid_pause');
    }
  }

  /** The pending pause with this token. @throws {AskUserError} `not_found`: unknown or already resolved. */
  async getByToken(token: string): Promise<Pending> {
    refuseUnstorableToken(token);
    const [row] = await this.#select('getByToken', (q) =>
      q.where(and(eq(t.token, token), isNull(t.resumedAt))).limit(1),
    );
    if (row === undefined) throw pauseNotFound([token]);
    return toPending(row);
  }

  /**
   * The conversation's pending pauses in the total FIFO order: priority DESC, created_at
   * ASC, token ASC. The token breaks ties between rows inserted in one transaction (they
   * share `created_at = now()`), so the order is deterministic.
   */
  async listPending(conversationId: string): Promise<Pending[]> {
    const rows = await this.#select('listPending', (q) =>
      q.where(and(eq(t.conversationId, conversationId), isNull(t.resumedAt))).orderBy(...fifo),
    );
    return rows.map(toPending);
  }

  /**
   * Pending pauses across all conversations, in the same total FIFO order as
   * `listPending`, at most `limit` (`<= 0` or omitted → 100). Served by a partial index:
   * the cost does not grow with the number of resolved rows.
   */
  async listPendingAll(limit?: number): Promise<Pending[]> {
    const n = normalizeLimit(limit, DEFAULT_PENDING_LIMIT);
    // The two ranges of the pending FIFO index (without and with an audience), merged in order.
    const range = (q: SelectQuery, hasAudience: boolean) =>
      q
        .where(and(isNull(t.resumedAt), eq(t.hasAudience, hasAudience)))
        .orderBy(...fifo)
        .limit(n);
    const rows = await this.#select('listPendingAll', (q) =>
      range(q, false)
        .unionAll(range(selectQuery(this.#db), true))
        .orderBy(...fifo)
        .limit(n),
    );
    return rows.map(toPending);
  }

  /**
   * Pending pauses counted by kind and priority, with those past their deadline: one grouped
   * read over the partial index of pending rows, cheap enough for a metrics scrape.
   */
  async countPending(): Promise<PendingCount[]> {
    try {
      const rows = await retryRead(() =>
        this.#db
          .select({
            kind: t.kind,
            priority: t.priority,
            pending: sql<number>`count(*)::int`,
            overdue: sql<number>`(count(*) filter (where ${t.deadlineAt} < now()))::int`,
          })
          .from(t)
          .where(isNull(t.resumedAt))
          .groupBy(t.kind, t.priority),
      );
      return rows.map((row) => ({
        kind: row.kind,
        priority: row.priority,
        pending: Number(row.pending),
        overdue: Number(row.overdue),
      }));
    } catch (error) {
      throw wrapDatabaseError(error, 'countPending');
    }
  }

  /**
   * The most recent pauses, pending and resolved, newest first (created_at DESC, token
   * DESC), at most `limit` (`<= 0` or omitted → 50).
   */
  async listRecent(limit?: number): Promise<PauseRecord[]> {
    const rows = await this.#select('listRecent', (q) =>
      q
        .orderBy(desc(t.createdAt), desc(t.token))
        .limit(normalizeLimit(limit, DEFAULT_RECENT_LIMIT)),
    );
    return rows.map(toRecord);
  }

  /**
   * Every pause of one conversation, pending and resolved, oldest first (created_at ASC,
   * token ASC): its history of questions and answers. Read through the two partial indexes
   * of one conversation's pending and resolved rows, so no other conversation is read.
   */
  async listForConversation(conversationId: string): Promise<PauseRecord[]> {
    const of = (resolved: boolean) =>
      this.#select('listForConversation', (q) =>
        q.where(
          and(
            eq(t.conversationId, conversationId),
            resolved ? isNotNull(t.resumedAt) : isNull(t.resumedAt),
          ),
        ),
      );
    const rows = [...(await of(false)), ...(await of(true))];
    return rows
      .map(toRecord)
      .sort(
        (a, b) =>
          a.createdAt.getTime() - b.createdAt.getTime() ||
          (a.token < b.token ? -1 : a.token > b.token ? 1 : 0),
      );
  }

  /**
   * Resolved pauses with their answers, oldest answer first (resumed_at ASC, token ASC),
   * at most `limit` (`<= 0` or omitted → 100), optionally for one conversation. An
   * answer given while no executive ran is found here after a restart; rows stay until
   * `cleanupResumedOlderThan` removes them, so the caller tracks which it has handled.
   */
  async listAnswered(options: ListAnsweredOptions = {}): Promise<AnsweredPause[]> {
    const filter =
      options.conversationId === undefined
        ? isNotNull(t.resumedAt)
        : and(eq(t.conversationId, options.conversationId), isNotNull(t.resumedAt));
    const rows = await this.#select('listAnswered', (q) =>
      q
        .where(filter)
        .orderBy(asc(t.resumedAt), asc(t.token))
        .limit(normalizeLimit(options.limit, DEFAULT_PENDING_LIMIT)),
    );
    return rows.map(toAnswered);
  }

  /**
   * The answer of a resolved pause, or `undefined` while it is still pending (not an
   * error: a poller asks this until the person answers).
   * @throws {AskUserError} `not_found`: no pause has this token (never inserted, or cleaned up).
   */
  async getAnswer(token: string): Promise<AnsweredPause | undefined> {
    refuseUnstorableToken(token);
    const [row] = await this.#select('getAnswer', (q) => q.where(eq(t.token, token)).limit(1));
    if (row === undefined) throw pauseNotFound([token]);
    return row.resumedAt === null ? undefined : toAnswered(row);
  }

  /**
   * The pending pauses `identity` may answer, in the FIFO order of `listPendingAll`, at most
   * `limit` (`<= 0` or omitted → 100): those whose audience is empty, names it or one of its
   * roles, less those it requested when their requester may not answer. Read through the
   * ordered index of `aura.pending_audience`, a range per name and role: the cost grows with
   * `limit` and the identity's roles, not with the number of pending pauses.
   * @throws {AskUserError} `invalid_argument` for a malformed identity.
   */
  async listAnswerable(identity: Identity, limit?: number): Promise<Pending[]> {
    const who = parseIdentity(identity);
    const n = normalizeLimit(limit, DEFAULT_PENDING_LIMIT);
    const rows = await this.#select('listAnswerable', (q) =>
      q
        .where(and(isNull(t.resumedAt), answerableBy(who, n)))
        .orderBy(...fifo)
        .limit(n),
    );
    return rows.map(toPending);
  }

  /**
   * Resolves one pending pause with `{ action, content }`, exactly once: a conditional
   * UPDATE, so of several concurrent calls for one token one succeeds.
   * `options.answeredBy` records who answered. With `options.identity` the same UPDATE
   * admits only an identity of the pause's audience that is not its barred requester
   * (without one nothing is checked: an administrator's answer). With an audit key the
   * answer, or its refusal (`forbidden`, already answered), is appended to the audit log in
   * one transaction with it; a refusal's entry is committed before the error is thrown
   * (inside a caller's transaction, only if the caller commits).
   * @throws {AskUserError} `invalid_answer` (action not accept/decline/cancel; nothing
   *   changes), `invalid_argument` (a bad option), `forbidden` (outside the audience, or the
   *   barred requester), `not_found` (unknown or already resolved token).
   */
  async markResumed(
    token: string,
    answer: ResumeAnswer,
    options: AnswerOptions = {},
  ): Promise<AnswerOutcome> {
    const parsed = parseAnswer(token, answer);
    const context = parseAnswerOptions(options);
    refuseUnstorableToken(token);
    try {
      if (context.identity !== undefined || this.#key !== undefined) {
        return await resolveGoverned(this.#db, this.#key, token, parsed, context);
      }
      const { answeredBy } = context;
      const [resolved] = await runPrepared(this.#db, answerPlain, {
        token,
        answer: JSON.stringify(parsed),
        answeredBy,
      });
      if (resolved !== undefined) return resolvedBy(answeredRow(resolved));
      const data = answerData(token, parsed, context);
      const recorded = await answerQuorum(this.#db, undefined, token, parsed, context, data);
      if (recorded) return recorded;
    } catch (error) {
      throw wrapDatabaseError(error, 'markResumed', token, 'invalid_answer');
    }
    throw await notAnswerable(this.#db, token);
  }

  /**
   * {@link markResumed} as statements of the caller's pipelined transaction (`@x/postgres-kit`'s
   * `pipelinedTransaction`), so that the caller's own writes share its round trips: the answer
   * is one statement, and with an audit key its signed entry is sent without waiting, to go
   * out with what the caller sends next and the COMMIT. Resolves to `undefined` when that
   * statement did not take the answer (refused, answered already, an approval towards a
   * quorum with an audit key, or without an identity): the transaction wrote nothing, and
   * {@link markResumed} then records (and throws) what happened.
   * @throws {AskUserError} `invalid_answer`, `invalid_argument`, `unavailable`.
   * @example
   * const outcome = await pipelinedTransaction(db, async (tx) => {
   *   const answered = await store.markResumedIn(tx, token, answer, { identity });
   *   if (answered?.resolved) void tx.run(myOwnWrite, { token }); // goes out with COMMIT
   *   return answered;
   * }) ?? (await store.markResumed(token, answer, { identity }));
   */
  async markResumedIn(
    pipeline: Pipeline,
    token: string,
    answer: ResumeAnswer,
    options: AnswerOptions = {},
  ): Promise<AnswerOutcome | undefined> {
    const parsed = parseAnswer(token, answer);
    const context = parseAnswerOptions(options);
    refuseUnstorableToken(token);
    try {
      if (context.identity !== undefined || this.#key !== undefined) {
        return await answerInPipeline(pipeline.run, this.#key, token, parsed, context);
      }
      const [resolved] = await pipeline.run(answerPlain, {
        token,
        answer: JSON.stringify(parsed),
        answeredBy: context.answeredBy,
      });
      return resolved === undefined ? undefined : resolvedBy(answeredRow(resolved));
    } catch (error) {
      throw wrapDatabaseError(error, 'markResumedIn', token, 'invalid_answer');
    }
  }

  /**
   * Applies the deadline of one pause, exactly once: a pending pause whose deadline has
   * passed (by the database's clock) is resolved with its default answer and marked expired
   * (`expiredAt`), never as a person's answer. Of an answer racing it, exactly one wins: an
   * answer after the deadline is refused as `expired`. With an audit key a
   * `question-expired` entry is appended in the same transaction. Idempotent: call it again
   * (another attempt of a run that crashed) and it returns the same resolved pause.
   * @returns the resolved pause (by this call, an earlier one, or an answer that came in
   *   time: see `expiredAt`), or `undefined` while it is pending and its deadline (if any)
   *   has not come.
   * @throws {AskUserError} `not_found` for an unknown token.
   */
  async expire(token: string): Promise<AnsweredPause | undefined> {
    refuseUnstorableToken(token);
    try {
      await withEntries(
        this.#db,
        this.#key,
        (tx) =>
          tx
            .update(t)
            .set({
              resumedAt: sql`now()`,
              resumedAnswer: sql`${t.deadlineAnswer}`,
              expiredAt: sql`now()`,
            })
            .where(
              and(
                eq(t.token, token),
                isNull(t.resumedAt),
                isNotNull(t.deadlineAnswer),
                sql`${t.deadlineAt} <= now()`,
              ),
            )
            .returning({
              conversationId: t.conversationId,
              answer: sql<string>`${t.resumedAnswer}::text`,
              deadlineAt: t.deadlineAt,
            }),
        (expired) =>
          expired.map((row) => {
            const answer = JSON.parse(row.answer) as ResumeAnswer;
            return {
              chain: conversationChain(row.conversationId),
              kind: 'question-expired',
              token,
              data: {
                token,
                action: answer.action,
                content: answer.content,
                by: null,
                deadline: new Date(row.deadlineAt ?? 0).toISOString(),
              },
            };
          }),
      );
    } catch (error) {
      throw wrapDatabaseError(error, 'expire', token);
    }
    return this.getAnswer(token);
  }

  /**
   * Applies what is due of the question's reminder and escalation (see `insert`), each
   * exactly once over all callers and restarts: a due reminder is recorded
   * (`question-reminded`, the caller delivers it), a due escalation adds its names and roles
   * to the audience (`question-escalated`). Its deadline is {@link AskUserStore.expire}'s.
   * Call it when `nextAt` comes (e.g. as the due time of a run queue's waiting run).
   * @returns what it applied now, whether the question still waits, and when it is next due.
   * @throws {AskUserError} `not_found` for an unknown token.
   */
  async applyDue(token: string): Promise<DueOutcome> {
    refuseUnstorableToken(token);
    try {
      return await applyDue(this.#db, this.#key, token);
    } catch (error) {
      throw wrapDatabaseError(error, 'applyDue', token);
    }
  }

  /**
   * The answers recorded towards a question's quorum, one per person, oldest first (empty
   * for a question without a quorum, or an unknown token).
   */
  async listApprovals(token: string): Promise<Approval[]> {
    if (typeof token === 'string' && unstorableText(token) !== undefined) return [];
    try {
      const rows = await retryRead(() =>
        this.#db
          .select()
          .from(approvals)
          .where(eq(approvals.token, token))
          .orderBy(asc(approvals.at), asc(approvals.operator)),
      );
      return rows.map((r) => ({
        operator: r.operator,
        action: resumeAnswerSchema.shape.action.parse(r.action),
        content: r.content,
        at: r.at,
      }));
    } catch (error) {
      throw wrapDatabaseError(error, 'listApprovals', token);
    }
  }

  /**
   * Resolves many pauses all or nothing, in ONE statement whatever the batch size: if any
   * answer is invalid, or any token is unknown or already resolved (also by a concurrent
   * caller), nothing is resolved. Rows are locked in token order, so overlapping batches
   * do not deadlock: one waits and then fails whole. Returns how many were resolved
   * ({@link AskUserStore.resolveBatch} returns the questions).
   * `options.answeredBy` records who answered them all.
   * @throws {AskUserError} `invalid_answer` (a bad answer, or a token named twice),
   *   `invalid_argument` (a bad `answeredBy`), `not_found` with `tokens` = every token that
   *   was not pending. Nothing changes.
   */
  async markResumedBatch(
    answers: ResumeAnswers,
    options: MarkResumedOptions = {},
  ): Promise<number> {
    return (await this.resolveBatch(answers, options)).length;
  }

  /**
   * {@link AskUserStore.markResumedBatch}, returning the questions it resolved, in token
   * order, as its one statement returned them (their waits, for a caller's metrics and
   * traces, without another read).
   * @throws {AskUserError} as `markResumedBatch`.
   */
  async resolveBatch(
    answers: ResumeAnswers,
    options: MarkResumedOptions = {},
  ): Promise<Array<AnsweredQuestion & { token: string }>> {
    const answeredBy = parseAnsweredBy(options);
    const entries = answerEntries(answers);
    if (entries.length === 0) return [];
    const seen = new Set<string>();
    const items = entries.map(([token, answer]) => {
      if (typeof token !== 'string') {
        throw new AskUserError('invalid_answer', 'batch token must be a string');
      }
      if (seen.has(token)) {
        throw new AskUserError(
          'invalid_answer',
          `token ${JSON.stringify(token)} appears twice in the batch`,
          { tokens: [token] },
        );
      }
      seen.add(token);
      return { token, answer: parseAnswer(token, answer) };
    });
    // A token the database cannot hold names no question: not found, before the database.
    const unstorable = items.map((i) => i.token).filter((token) => unstorableText(token));
    if (unstorable.length > 0) {
      throw pauseNotFound(
        unstorable,
        `batch not applied, nothing was resolved: no pause can have the token${unstorable.length === 1 ? '' : 's'} ${unstorable
          .map((m) => JSON.stringify(m))
          .join(
            ', ',
          )} (${unstorableText(unstorable[0] as string)}); drop ${unstorable.length === 1 ? 'it' : 'them'} and retry`,
      );
    }
    const answerOf = new Map(items.map((i) => [i.token, i.answer]));
    const query = sql`
      with answers as (
        select a.token, a.answer from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as a(token text, answer jsonb)
      ), locked as materialized (
        select p.token from ${t} p join answers a on a.token = p.token
        where p.resumed_at is null and (p.deadline_at is null or p.deadline_at > now()) and p.quorum is null
        order by p.token for update of p
      ), updated as (
        update ${t} p set resumed_at = now(), resumed_answer = a.answer, answered_by = ${answeredBy}::text
        from locked l join answers a on a.token = l.token
        where p.token = l.token and (select count(*) from locked) = ${items.length}::bigint
        returning p.token, p.conversation_id, ${answeredJson} as question
      )
      select (select count(*) from updated)::int as updated,
        (select coalesce(json_agg(json_build_array(u.token, u.conversation_id) order by u.token), '[]'::json)::text
          from updated u) as resolved,
        (select coalesce(json_agg(json_build_array(u.token, u.question::json) order by u.token), '[]'::json)::text
          from updated u) as questions,
        (select coalesce(json_agg(a.token order by a.token), '[]'::json)::text from answers a
          where a.token not in (select token from locked)) as missing`;
    const key = this.#key;
    let row: Record<string, unknown> | undefined;
    try {
      ({ row } = await withEntries(
        this.#db,
        key,
        async (tx) => {
          const [result] = rowsOf(await tx.execute(query));
          if (key === undefined || Number(result?.updated) === items.length) {
            return { row: result, refused: [] };
          }
          // A new statement sees what a concurrent batch committed: those are refusals.
          const refused = rowsOf(
            await tx.execute(sql`select token, conversation_id, ${expiredNow} as expired from ${t}
              where (resumed_at is not null or deadline_at <= now()) and token in
                (select jsonb_array_elements_text(${String(result?.missing ?? '[]')}::jsonb))`),
          );
          return { row: result, refused };
        },
        ({ row: result, refused }) => {
          const done: [string, string, boolean?][] =
            refused.length > 0
              ? refused.map((r) => [String(r.token), String(r.conversation_id), isTrue(r.expired)])
              : JSON.parse(String(result?.resolved ?? '[]'));
          return done.map(([token, conversationId, expired]) => {
            const answer = answerOf.get(token);
            return {
              chain: conversationChain(conversationId),
              kind: refused.length > 0 ? 'answer-refused' : 'question-answered',
              token,
              data: {
                token,
                action: answer?.action,
                content: answer?.content,
                by: answeredBy,
                ...(refused.length > 0 ? { reason: expired ? 'expired' : 'already_answered' } : {}),
              },
            };
          });
        },
      ));
    } catch (error) {
      throw wrapDatabaseError(error, 'markResumedBatch', undefined, 'invalid_answer');
    }
    const updated = Number(row?.updated);
    if (updated === items.length) {
      const questions = JSON.parse(String(row?.questions ?? '[]')) as Array<
        [string, Parameters<typeof answeredOf>[0]]
      >;
      return questions.map(([token, question]) => ({ token, ...answeredOf(question) }));
    }
    const missing = JSON.parse(String(row?.missing ?? '[]')) as string[];
    const expired = await expiredAmong(this.#db, missing);
    if (expired.length > 0) throw pauseExpired(expired, 'batch not applied, nothing was resolved');
    const needQuorum = await quorumAmong(this.#db, missing);
    if (needQuorum.length > 0) {
      throw new AskUserError(
        'invalid_answer',
        `batch not applied, nothing was resolved: ${needQuorum.map((m) => JSON.stringify(m)).join(', ')} need a quorum of approvals; answer each alone, naming who answers`,
        { tokens: needQuorum },
      );
    }
    throw pauseNotFound(
      missing,
      `batch not applied, nothing was resolved: no pending pause for ${missing
        .map((m) => JSON.stringify(m))
        .join(', ')}; drop those tokens and retry`,
    );
  }

  /**
   * Resolves every pending pause of the conversation with `{ action: 'cancel', content:
   * AUTO_TERMINATED_MARKER }` in one statement (for when the conversation loop stops);
   * afterwards it has no pending pause. Returns how many it resolved (0 is fine).
   */
  async autoResolveForConversation(conversationId: string): Promise<number> {
    const answer: ResumeAnswer = { action: ACTION_CANCEL, content: AUTO_TERMINATED_MARKER };
    try {
      const rows = await withEntries(
        this.#db,
        this.#key,
        (tx) =>
          tx
            .update(t)
            .set({ resumedAt: sql`now()`, resumedAnswer: answer })
            .where(and(eq(t.conversationId, conversationId), isNull(t.resumedAt)))
            .returning({ token: t.token }),
        (resolved) =>
          resolved.map(({ token }) => ({
            chain: conversationChain(conversationId),
            kind: 'question-cancelled',
            token,
            data: { token, action: answer.action, content: answer.content, by: null },
          })),
      );
      return rows.length;
    } catch (error) {
      throw wrapDatabaseError(error, 'autoResolveForConversation');
    }
  }

  /**
   * Deletes resolved pauses whose answer is older than `cutoff` (resumed_at < cutoff),
   * except those of `options.keepConversations`. Never deletes a pending pause, however
   * old. With `options.dryRun` it only counts them. Returns how many it deleted (or would).
   * @throws {AskUserError} `invalid_argument` for an invalid cutoff or keep list.
   */
  async cleanupResumedOlderThan(cutoff: Date, options: CleanupOptions = {}): Promise<number> {
    if (!(cutoff instanceof Date) || Number.isNaN(cutoff.getTime())) {
      throw new AskUserError(
        'invalid_argument',
        'cleanupResumedOlderThan needs a valid Date cutoff',
      );
    }
    const keep = options.keepConversations ?? [];
    if (!Array.isArray(keep) || keep.some((id) => typeof id !== 'string')) {
      throw new AskUserError(
        'invalid_argument',
        'cleanupResumedOlderThan keepConversations must be an array of conversation ids',
      );
    }
    // One JSON parameter, whatever the number of kept conversations (a list of bind
    // parameters would hit the protocol's 65535 limit).
    const old = and(
      isNotNull(t.resumedAt),
      lt(t.resumedAt, cutoff),
      keep.length === 0
        ? undefined
        : sql`${t.conversationId} not in (select jsonb_array_elements_text(${JSON.stringify(keep)}::jsonb))`,
    );
    try {
      if (options.dryRun) {
        const [row] = await this.#db
          .select({ count: sql<number>`count(*)::int` })
          .from(t)
          .where(old);
        return Number(row?.count ?? 0);
      }
      const rows = await withEntries(
        this.#db,
        this.#key,
        (tx) =>
          tx.delete(t).where(old).returning({ token: t.token, conversationId: t.conversationId }),
        (deleted) => {
          const tokensOf = new Map<string, string[]>();
          for (const { token, conversationId } of deleted) {
            tokensOf.set(conversationId, [...(tokensOf.get(conversationId) ?? []), token]);
          }
          return [...tokensOf].map(([conversationId, tokens]) => ({
            chain: conversationChain(conversationId),
            kind: 'question-purged',
            data: { tokens, cutoff: cutoff.toISOString() },
          }));
        },
      );
      return rows.length;
    } catch (error) {
      throw wrapDatabaseError(error, 'cleanupResumedOlderThan');
    }
  }

  async #select(doing: string, build: (q: SelectQuery) => PromiseLike<Row[]>): Promise<Row[]> {
    try {
      return await retryRead(() => build(selectQuery(this.#db)));
    } catch (error) {
      throw wrapDatabaseError(error, doing);
    }
  }
}

/** A time as the audit log records it: the absolute one, or the duration from now. */
function timeOf(w: { at?: Date | undefined; inMs?: number | undefined }) {
  return { at: w.at?.toISOString() ?? null, inMs: w.inMs ?? null };
}

function isTrue(value: unknown): boolean {
  return value === true || value === 't';
}

/** Of these tokens, those whose deadline refuses an answer (applied, or passed). */
async function expiredAmong(db: AskUserDatabase, tokens: readonly string[]): Promise<string[]> {
  if (tokens.length === 0) return [];
  const rows = rowsOf(
    await db.execute(sql`select token from ${t} where ${expiredNow} and token in
      (select jsonb_array_elements_text(${JSON.stringify(tokens)}::jsonb)) order by token`),
  );
  return rows.map((r) => String(r.token));
}

/** Of these tokens, the pending ones that need a quorum (a batch does not answer them). */
async function quorumAmong(db: AskUserDatabase, tokens: readonly string[]): Promise<string[]> {
  if (tokens.length === 0) return [];
  const rows = rowsOf(
    await db.execute(sql`select token from ${t} where quorum is not null and resumed_at is null
      and token in (select jsonb_array_elements_text(${JSON.stringify(tokens)}::jsonb)) order by token`),
  );
  return rows.map((r) => String(r.token));
}

/** Why a pause took no answer: its deadline (`expired`), else `not_found`. */
async function notAnswerable(db: AskUserDatabase, token: string): Promise<AskUserError> {
  const expired = await expiredAmong(db, [token]).catch((error: unknown) => {
    throw wrapDatabaseError(error, 'markResumed', token);
  });
  return expired.length > 0 ? pauseExpired([token]) : pauseNotFound([token]);
}

function selectQuery(db: AskUserDatabase) {
  return db.select(columns).from(t).$dynamic();
}
type SelectQuery = ReturnType<typeof selectQuery>;

function normalizeLimit(limit: number | undefined, fallback: number): number {
  if (limit === undefined || !Number.isFinite(limit) || limit <= 0) return fallback;
  return Math.max(1, Math.floor(limit));
}

const ACTIONS: ReadonlySet<unknown> = new Set(Object.values(actions));

function parseAnsweredBy(options: unknown): string | null {
  const parsed = markResumedOptionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    throw new AskUserError(
      'invalid_argument',
      'answeredBy must be a name of 1 to 200 characters, or null',
      { cause: parsed.error },
    );
  }
  return parsed.data.answeredBy ?? null;
}

function parseAnswerOptions(options: unknown): AnswerContext {
  const parsed = answerOptionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AskUserError(
      'invalid_argument',
      `invalid answer option ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'} (answeredBy and identity.name are names of 1 to 200 characters)`,
      { cause: parsed.error },
    );
  }
  const o = parsed.data;
  return {
    answeredBy: o.answeredBy ?? o.identity?.name ?? null,
    identity: o.identity,
    signedInWith: o.signedInWith,
    channel: o.channel,
    shownDigest: o.shownDigest,
  };
}

function parseIdentity(identity: unknown): Identity {
  const parsed = identitySchema.safeParse(identity);
  if (parsed.success) return parsed.data;
  throw new AskUserError(
    'invalid_argument',
    'an identity is { name, roles? }: a name of 1 to 200 characters and a list of role names',
    { cause: parsed.error },
  );
}

function parseAnswer(token: string, answer: unknown): ResumeAnswer {
  // The plain shape is checked by hand first (a batch checks thousands); anything else goes
  // through the schema, which also says what is wrong.
  const parsed = isPlainAnswer(answer)
    ? { success: true as const, data: { action: answer.action, content: answer.content } }
    : resumeAnswerSchema.safeParse(answer);
  if (parsed.success) {
    const problem = unstorableText(parsed.data.content);
    if (problem === undefined) return parsed.data;
    throw new AskUserError(
      'invalid_answer',
      `invalid answer for token ${JSON.stringify(token)}: its content holds ${problem}, which cannot be stored; nothing was changed`,
      { tokens: [token] },
    );
  }
  throw new AskUserError(
    'invalid_answer',
    `invalid answer for token ${JSON.stringify(token)}: expected { action: 'accept' | 'decline' | 'cancel', content: string }`,
    { tokens: [token], cause: parsed.error },
  );
}

/**
 * A token the database cannot hold (a NUL, a lone surrogate) names no question: `not_found`,
 * without asking the database (which would refuse the value as a data exception).
 */
function refuseUnstorableToken(token: string): void {
  if (typeof token === 'string' && unstorableText(token) !== undefined) {
    throw pauseNotFound([token]);
  }
}

/** Exactly `{ action, content }` of the right types (what the strict schema accepts). */
function isPlainAnswer(value: unknown): value is ResumeAnswer {
  if (
    typeof value !== 'object' ||
    value === null ||
    Object.getPrototypeOf(value) !== Object.prototype
  ) {
    return false;
  }
  const { action, content } = value as Record<string, unknown>;
  return ACTIONS.has(action) && typeof content === 'string' && Object.keys(value).length === 2;
}

function answerEntries(answers: ResumeAnswers): [unknown, unknown][] {
  if (answers instanceof Map) return [...answers.entries()];
  if (Array.isArray(answers)) {
    return answers.map((item: { token?: unknown; answer?: unknown }) => [
      item?.token,
      item?.answer,
    ]);
  }
  return Object.entries(answers);
}
