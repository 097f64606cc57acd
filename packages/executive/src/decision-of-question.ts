import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { type DecisionRecord, decisionsOf } from './policy-decisions.js';
import type { ExecutiveDatabase as Db } from './storage.js';

/**
 * The policy decision that asked the question `token` (its outcome, reason, rules and the
 * set's hash), for explaining it; null when no decision asked it (unknown, or asked before
 * decisions were recorded).
 */
export async function decisionOfQuestion(db: Db, token: string): Promise<DecisionRecord | null> {
  const [row] = rowsOf(
    await db.execute(
      sql`select run_id from x_executive.policy_decisions where token = ${token} limit 1`,
    ),
  );
  if (!row) return null;
  const decisions = await decisionsOf(db, String(row.run_id));
  return decisions.find((decision) => decision.token === token) ?? null;
}
