import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** The Postgres schema that holds the askuser table: `aura`. */
export const auraSchema = pgSchema('aura');

/**
 * `aura.paused_states`: one row per question put to a person. `resumed_at IS NULL` means
 * the pause is still pending; once set, `resumed_answer` holds `{ action, content }`.
 * Exported so callers can join it in their own queries (e.g. the runner against its
 * continuation table); write to it only through {@link AskUserStore}.
 */
export const pausedStates = auraSchema.table(
  'paused_states',
  {
    token: text('token').primaryKey(),
    conversationId: text('conversation_id').notNull(),
    kind: text('kind').notNull(),
    question: text('question').notNull(),
    options: jsonb('options'),
    priority: integer('priority').notNull().default(0),
    toolCallId: text('tool_call_id').notNull(),
    resumeContext: jsonb('resume_context'),
    // A flat swarm worker id ("w1".."wN"), stored verbatim: never a uuid.
    proxiedFromChildId: text('proxied_from_child_id'),
    proxiedToolCallId: text('proxied_tool_call_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    resumedAt: timestamp('resumed_at', { withTimezone: true }),
    resumedAnswer: jsonb('resumed_answer'),
    // Who resolved the pause (an operator's name, an OS user); null when not told.
    answeredBy: text('answered_by'),
    // Who may answer: operator names and roles; both empty means any operator.
    audienceNames: text('audience_names').array().notNull().default(sql`'{}'::text[]`),
    audienceRoles: text('audience_roles').array().notNull().default(sql`'{}'::text[]`),
    // The person the agent acts for, and whether they are barred from answering.
    requester: text('requester'),
    requesterMayNotAnswer: boolean('requester_may_not_answer').notNull().default(false),
    // When the wait ends without an answer, and the `{ action, content }` applied then.
    deadlineAt: timestamp('deadline_at', { withTimezone: true }),
    deadlineAnswer: jsonb('deadline_answer'),
    // Set when the deadline was applied (the outcome `expired`), never by an answer.
    expiredAt: timestamp('expired_at', { withTimezone: true }),
    // When to remind the audience (an event for the caller to deliver), and when that was done.
    remindAt: timestamp('remind_at', { withTimezone: true }),
    remindedAt: timestamp('reminded_at', { withTimezone: true }),
    // When to widen the audience by these names and roles, and when that was done.
    escalateAt: timestamp('escalate_at', { withTimezone: true }),
    escalateNames: text('escalate_names').array().notNull().default(sql`'{}'::text[]`),
    escalateRoles: text('escalate_roles').array().notNull().default(sql`'{}'::text[]`),
    escalatedAt: timestamp('escalated_at', { withTimezone: true }),
    // Distinct approvals that resolve it (null: the first answer does), and declines (null: 1).
    quorum: integer('quorum'),
    quorumDeclines: integer('quorum_declines'),
    // Who accepted and who declined so far, on the row an answer locks: counted in one UPDATE.
    approvers: text('approvers').array().notNull().default(sql`'{}'::text[]`),
    decliners: text('decliners').array().notNull().default(sql`'{}'::text[]`),
    // What the approvals so far accept (the first accept's content): each must accept the same.
    approvedContent: text('approved_content'),
    // Whether the audience names anyone (migration 0009): computed by the server for every
    // writer; a question without one has no pending_audience row.
    hasAudience: boolean('has_audience').generatedAlwaysAs(
      sql`cardinality(audience_names) > 0 OR cardinality(audience_roles) > 0`,
    ),
  },
  (t) => [
    // listPending(conversationId) and autoResolveForConversation: pending rows of one
    // conversation, in FIFO order but for the token (their few ties are sorted after).
    index('paused_states_pending_conversation_fifo_idx')
      .on(t.conversationId, t.priority.desc().nullsFirst(), t.createdAt.asc())
      .where(sql`${t.resumedAt} is null`),
    // listPendingAll(limit): the cross-conversation FIFO, one range per `has_audience`, merged;
    // listAnswerable reads the range of questions open to anyone. A LIMIT reads its first rows.
    index('paused_states_pending_fifo_idx')
      .on(t.hasAudience, t.priority.desc().nullsFirst(), t.createdAt.asc(), t.token.asc())
      .where(sql`${t.resumedAt} is null`),
    // listRecent(limit): scanned backwards for newest first.
    index('paused_states_created_idx').on(t.createdAt, t.token),
    // listAnswered and cleanupResumedOlderThan: resolved rows by answer time.
    index('paused_states_answered_idx')
      .on(t.resumedAt, t.token)
      .where(sql`${t.resumedAt} is not null`),
    // listAnswered({ conversationId }).
    index('paused_states_answered_conversation_idx')
      .on(t.conversationId, t.resumedAt)
      .where(sql`${t.resumedAt} is not null`),
  ],
);

/**
 * `aura.pending_audience`: one row per pending pause with an audience and audience key
 * (`name:<n>`, `role:<r>`), added on insert and removed on resolution (by the store's
 * statements, by triggers for other writers), so the pending list of one identity is a few
 * ordered index scans. A question anyone may answer has no row here (migration 0009).
 */
export const pendingAudience = auraSchema.table(
  'pending_audience',
  {
    audienceKey: text('audience_key').notNull(),
    priority: integer('priority').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    token: text('token')
      .notNull()
      .references(() => pausedStates.token, { onDelete: 'cascade' }),
  },
  (t) => [
    primaryKey({ columns: [t.token, t.audienceKey] }),
    // listAnswerable: the pending FIFO of one audience key, read in order.
    index('pending_audience_fifo_idx').on(
      t.audienceKey,
      t.priority.desc().nullsFirst(),
      t.createdAt.asc(),
      t.token.asc(),
    ),
  ],
);

/**
 * `aura.approvals`: each operator's answer to a question that needs a quorum, once per
 * operator (a second answer of the same person counts once); the question resolves when
 * enough of them agree. Removed with its question.
 */
export const approvals = auraSchema.table(
  'approvals',
  {
    token: text('token')
      .notNull()
      .references(() => pausedStates.token, { onDelete: 'cascade' }),
    operator: text('operator').notNull(),
    action: text('action').notNull(),
    content: text('content').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.token, t.operator] })],
);

/**
 * `aura.audit_entries`: the append-only audit log. Each entry is the `seq`-th of its
 * `chain` (a conversation's, an app's, or the global seal chain), holds the `hash` of the
 * entry before it (`prev`), its own SHA-256 `hash` and an HMAC-SHA256 `sig` of that hash.
 * Write it only through the store and the audit functions.
 */
export const auditEntries = auraSchema.table(
  'audit_entries',
  {
    id: bigserial('id', { mode: 'bigint' }).primaryKey(),
    chain: text('chain').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    kind: text('kind').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull(),
    token: text('token'),
    // The entry's data as canonical JSON text: exactly what was hashed.
    body: text('body').notNull(),
    prev: text('prev').notNull(),
    hash: text('hash').notNull(),
    sig: text('sig').notNull(),
  },
  (t) => [
    uniqueIndex('audit_entries_chain_seq_idx').on(t.chain, t.seq),
    // BRIN: entries are appended in time order, and a range of time is all that is asked.
    index('audit_entries_at_idx').using('brin', t.at),
    // verifyAudit: a pause's entries, to check its row against what the log recorded.
    index('audit_entries_token_idx').on(t.token, t.id).where(sql`${t.token} is not null`),
  ],
);

/**
 * `aura.audit_heads`: the last entry of each chain; its row lock serialises one chain's
 * appends. Its pages are kept half empty (`fillfactor = 50`, migration 0008), so that moving a
 * head is a HOT update.
 */
export const auditHeads = auraSchema.table('audit_heads', {
  chain: text('chain').primaryKey(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
  hash: text('hash').notNull(),
});

/** `aura.audit_sealed`: how far each chain is sealed into the global chain. */
export const auditSealed = auraSchema.table('audit_sealed', {
  chain: text('chain').primaryKey(),
  seq: bigint('seq', { mode: 'number' }).notNull(),
});
