// Internal: a question's reminder and escalation, each applied once when its time came.
import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { textArray } from './audience.js';
import { appendEntries, conversationChain, inTransaction, type NewEntry } from './audit-chain.js';
import type { AskUserDatabase } from './database.js';
import { pauseNotFound } from './errors.js';
import type { DueOutcome } from './types.js';

/**
 * Applies what is due of one question's reminder and escalation, each at most once over all
 * callers: its row is locked, and `reminded_at` / `escalated_at` say what was applied. An
 * escalation adds its names and roles to a non-empty audience (an empty one already admits
 * anyone), in `pending_audience` too. With a key, each is appended to the audit log.
 */
export async function applyDue(
  db: AskUserDatabase,
  key: Buffer | undefined,
  token: string,
): Promise<DueOutcome> {
  return inTransaction(db, async (tx) => {
    const [row] = rowsOf(
      await tx.execute(sql`select conversation_id, resumed_at is not null as resolved,
          remind_at is not null and reminded_at is null and remind_at <= now() as remind,
          escalate_at is not null and escalated_at is null and escalate_at <= now() as escalate,
          array_to_json(escalate_names)::text as names, array_to_json(escalate_roles)::text as roles,
          cardinality(audience_names) + cardinality(audience_roles) = 0 as anyone
        from aura.paused_states where token = ${token} for update`),
    );
    if (row === undefined) throw pauseNotFound([token]);
    if (isTrue(row.resolved))
      return { reminded: false, escalated: null, pending: false, nextAt: null };
    const reminded = isTrue(row.remind);
    const names = JSON.parse(String(row.names)) as string[];
    const roles = JSON.parse(String(row.roles)) as string[];
    const escalated = isTrue(row.escalate) ? { names, roles } : null;
    const widen = escalated !== null && !isTrue(row.anyone);
    if (reminded || escalated) {
      await tx.execute(sql`update aura.paused_states set
          reminded_at = case when ${reminded} then now() else reminded_at end,
          escalated_at = case when ${escalated !== null} then now() else escalated_at end,
          audience_names = case when ${widen} then array(select distinct x from unnest(audience_names || escalate_names) x order by x) else audience_names end,
          audience_roles = case when ${widen} then array(select distinct x from unnest(audience_roles || escalate_roles) x order by x) else audience_roles end
        where token = ${token}`);
    }
    if (widen) {
      const keys = [...names.map((n) => `name:${n}`), ...roles.map((r) => `role:${r}`)];
      await tx.execute(sql`insert into aura.pending_audience (audience_key, priority, created_at, token)
        select k, p.priority, p.created_at, p.token from aura.paused_states p, unnest(${textArray(keys)}) k
        where p.token = ${token} on conflict do nothing`);
    }
    if (key !== undefined) {
      const chain = conversationChain(String(row.conversation_id));
      const entries: NewEntry[] = [];
      if (reminded) entries.push({ chain, kind: 'question-reminded', token, data: { token } });
      if (escalated) {
        entries.push({ chain, kind: 'question-escalated', token, data: { token, ...escalated } });
      }
      if (entries.length > 0) await appendEntries(tx, key, entries);
    }
    // What was applied now is no longer due: the next time is the earliest one left.
    const [left] = rowsOf(
      await tx.execute(sql`select (select min(x) from unnest(array[
          case when reminded_at is null then remind_at end,
          case when escalated_at is null then escalate_at end,
          deadline_at]) x) as next_at from aura.paused_states where token = ${token}`),
    );
    const next = left?.next_at;
    return {
      reminded,
      escalated,
      pending: true,
      nextAt: next === null || next === undefined ? null : new Date(String(next)),
    };
  });
}

function isTrue(value: unknown): boolean {
  return value === true || value === 't';
}
