// Internal: a resolved question's wait as a raw statement returns it, for the answers that
// resolve questions by raw SQL (a quorum's last approval, a batch).
import { sql } from 'drizzle-orm';
import type { AnsweredQuestion } from './types.js';

/**
 * Of the `aura.paused_states` row aliased `p` that a statement just resolved, its wait as
 * one JSON text: every driver returns it alike (timestamps, arrays and jsonb included).
 */
export const answeredJson = sql`json_build_object(
    'conversationId', p.conversation_id, 'toolCallId', p.tool_call_id, 'kind', p.kind,
    'priority', p.priority, 'createdAt', p.created_at, 'resumedAt', p.resumed_at,
    'names', p.audience_names, 'roles', p.audience_roles, 'resumeContext', p.resume_context
  )::text`;

/** The {@link AnsweredQuestion} of an {@link answeredJson} object (parsed). */
export function answeredOf(row: {
  conversationId: string;
  toolCallId: string;
  kind: string;
  priority: number;
  createdAt: string;
  resumedAt: string;
  names: string[];
  roles: string[];
  resumeContext: unknown;
}): AnsweredQuestion {
  return {
    conversationId: row.conversationId,
    toolCallId: row.toolCallId,
    kind: row.kind,
    priority: row.priority,
    createdAt: new Date(row.createdAt),
    resumedAt: new Date(row.resumedAt),
    audience: { names: row.names, roles: row.roles },
    resumeContext: row.resumeContext,
  };
}

/**
 * Of the `aura.paused_states` row aliased `p` that a statement just resolved, its wait as
 * columns (times as epoch milliseconds, arrays and jsonb as text): every driver returns
 * them alike, and a prepared statement's row is read without parsing one JSON text.
 */
export const answeredColumns = sql`p.conversation_id, p.tool_call_id, p.kind, p.priority,
        floor(extract(epoch from p.created_at) * 1000)::float8 as created_ms,
        floor(extract(epoch from p.resumed_at) * 1000)::float8 as resumed_ms,
        array_to_json(p.audience_names)::text as audience_names,
        array_to_json(p.audience_roles)::text as audience_roles,
        p.resume_context::text as resume_context`;
