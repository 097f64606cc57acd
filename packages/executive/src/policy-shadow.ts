import type { DecisionInput, PolicySet } from '@x/policy';
import { sql } from 'drizzle-orm';
import {
  type AnsweredDecision,
  answeredDecisions,
  type ShadowOutcome,
} from './policy-decisions.js';
import type { ExecutiveDatabase as Db } from './storage.js';

/**
 * What the candidate set `shadow` decides of `call`, to record beside the active decision:
 * never thrown, a failure recorded as its error. An allowed `ask_user` call asks, as the
 * active set's does, since it needs an answer.
 */
export function shadowOutcome(shadow: PolicySet, call: DecisionInput): ShadowOutcome {
  try {
    const decided = shadow.decide(call);
    const { reason, ruleIds, policyHash } = decided;
    const error = decided.outcome === 'ask' ? decided.error : null;
    const outcome =
      decided.outcome === 'allow' && call.tool === 'ask_user' ? 'ask' : decided.outcome;
    return { outcome, reason, ruleIds, policyHash, error };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    // Deciding fails closed: a candidate that could not decide would have asked.
    return {
      outcome: 'ask',
      reason: 'deciding failed',
      ruleIds: [],
      policyHash: shadow.hash,
      error,
    };
  }
}

/** A decision whose candidate (shadow) outcome differs from the active one, or failed. */
export type ShadowDisagreement = AnsweredDecision & { shadow: ShadowOutcome };

/** Options of {@link shadowDisagreements}. */
export interface ShadowDisagreementsOptions {
  /** The oldest decision read. */
  since: Date;
  /** The most disagreements returned, oldest first; default 1,000. */
  limit?: number;
}

/**
 * The decisions since `since` on which the candidate (shadow) policy set disagreed with the
 * active one: another outcome, or an error while deciding; oldest first, each with what the
 * active set decided, what the candidate would have, and what people answered its question
 * (null: none asked, or not answered yet). For `runner policy shadow` and the approval
 * center's Policies tab.
 *
 * @example
 * const week = new Date(Date.now() - 7 * 24 * 3600_000);
 * for (const d of await shadowDisagreements(db, { since: week })) {
 *   console.log(d.tool, d.outcome, '->', d.shadow.outcome, d.answer);
 * }
 */
export async function shadowDisagreements(
  db: Db,
  { since, limit = 1_000 }: ShadowDisagreementsOptions,
): Promise<ShadowDisagreement[]> {
  const found: ShadowDisagreement[] = [];
  const disagreeing = sql`and d.shadow is not null
    and (d.shadow->>'outcome' <> d.outcome or d.shadow->>'error' is not null)`;
  for await (const decision of answeredDecisions(db, since, Math.min(limit, 2_000), disagreeing)) {
    if (decision.shadow === null) continue;
    found.push({ ...decision, shadow: decision.shadow });
    if (found.length >= limit) break;
  }
  return found;
}
