import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgSchema, text, timestamp } from 'drizzle-orm/pg-core';

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
  },
  (t) => [
    // listPending(conversationId) and autoResolveForConversation: pending rows of one
    // conversation, already in FIFO order, so the read needs no sort.
    index('paused_states_pending_conversation_fifo_idx')
      .on(t.conversationId, t.priority.desc().nullsFirst(), t.createdAt.asc(), t.token.asc())
      .where(sql`${t.resumedAt} is null`),
    // listPendingAll(limit): the cross-conversation FIFO; a LIMIT reads only its first rows.
    index('paused_states_pending_fifo_idx')
      .on(t.priority.desc().nullsFirst(), t.createdAt.asc(), t.token.asc())
      .where(sql`${t.resumedAt} is null`),
    // listRecent(limit): scanned backwards for newest first.
    index('paused_states_created_idx').on(t.createdAt, t.token),
    // listAnswered and cleanupResumedOlderThan: resolved rows by answer time.
    index('paused_states_answered_idx')
      .on(t.resumedAt, t.token)
      .where(sql`${t.resumedAt} is not null`),
    // listAnswered({ conversationId }).
    index('paused_states_answered_conversation_idx')
      .on(t.conversationId, t.resumedAt, t.token)
      .where(sql`${t.resumedAt} is not null`),
  ],
);
