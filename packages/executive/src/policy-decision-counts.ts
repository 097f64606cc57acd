import type { Outcome } from '@x/policy';
import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import type { ExecutiveDatabase as Db } from './storage.js';

/** How many decisions of each outcome one rule took part in (or no rule, for `ruleId` null). */
export interface RuleDecisionCounts {
  /** The rule's id as the decisions recorded it; null: decisions no rule made (no rule matched, arguments that do not fit). */
  ruleId: string | null;
  allow: number;
  deny: number;
  ask: number;
}

/**
 * What each rule decided since `since`, counted in one statement over
 * `x_executive.policy_decisions`: a decision several rules made counts for each of them, one no
 * rule made counts under `ruleId` null. Rules are named by id, so a rule kept across reloaded
 * versions of a set is counted once; sorted by rule id, the null row last.
 */
export async function decisionCountsSince(db: Db, since: Date): Promise<RuleDecisionCounts[]> {
  const rows = rowsOf(
    await db.execute(sql`select r.rule_id, d.outcome, count(*)::int as n
      from x_executive.policy_decisions d
      left join lateral jsonb_array_elements_text(d.rule_ids) as r(rule_id) on true
      where d.decided_at >= ${since.toISOString()}::timestamptz
      group by r.rule_id, d.outcome`),
  );
  const byRule = new Map<string | null, RuleDecisionCounts>();
  for (const row of rows) {
    const ruleId = row.rule_id === null || row.rule_id === undefined ? null : String(row.rule_id);
    const counts = byRule.get(ruleId) ?? { ruleId, allow: 0, deny: 0, ask: 0 };
    const outcome = String(row.outcome) as Outcome;
    if (outcome === 'allow' || outcome === 'deny' || outcome === 'ask') {
      counts[outcome] += Number(row.n);
    }
    byRule.set(ruleId, counts);
  }
  return [...byRule.values()].sort((a, b) =>
    a.ruleId === null ? 1 : b.ruleId === null ? -1 : a.ruleId < b.ruleId ? -1 : 1,
  );
}
