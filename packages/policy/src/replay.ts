import type { Decision, Outcome } from './decision.js';
import type { DecisionInput, PolicySet } from './policy-set.js';

/** What people answered a question: accepted, declined, cancelled, or nobody in time. */
export type RecordedAnswer = 'accept' | 'decline' | 'cancel' | 'expired';

/** One past call or question as it was decided, and what people answered if it asked them. */
export interface RecordedDecision {
  /** What identifies it to a reader (a question's token, a tool call's id). */
  id: string;
  /** The call, as decided then (its arguments, requester, run, time and counters). */
  call: DecisionInput;
  /** What the policies decided then. */
  outcome: Outcome;
  /** What people answered, when it asked and was answered; null otherwise. */
  answer: RecordedAnswer | null;
}

/** One recorded decision the candidate set decides otherwise. */
export interface ReplayChange {
  recorded: RecordedDecision;
  /** The candidate set's decision. */
  now: Decision;
}

/** What a candidate set would have decided on recorded decisions, next to what people answered. */
export interface ReplaySummary {
  /** How many recorded decisions were decided again. */
  decided: number;
  /** How many of them asked people. */
  asked: number;
  /** Of those asked, how many the candidate would allow with no person. */
  askedNowAllowed: number;
  /** Of those it would allow, the ones people had declined, cancelled or let expire. */
  allowedThoughRefused: ReplayChange[];
  /** Every recorded decision whose outcome the candidate changes, in the order given. */
  changes: ReplayChange[];
}

/**
 * Decides every recorded decision again with a candidate set and sets what would change next
 * to what people answered: how many asked calls it would allow, and which of those people had
 * refused. No storage: the caller reads the recorded decisions.
 *
 * @example
 * const summary = replayDecisions(candidate, recorded);
 * console.log(`would allow ${summary.askedNowAllowed} of ${summary.asked} asked calls; people declined ${summary.allowedThoughRefused.length} of those`);
 */
export function replayDecisions(
  candidate: PolicySet,
  recorded: Iterable<RecordedDecision>,
): ReplaySummary {
  const summary: ReplaySummary = {
    decided: 0,
    asked: 0,
    askedNowAllowed: 0,
    allowedThoughRefused: [],
    changes: [],
  };
  for (const past of recorded) {
    summary.decided++;
    const now = candidate.decide(past.call);
    if (now.outcome !== past.outcome) summary.changes.push({ recorded: past, now });
    if (past.outcome !== 'ask') continue;
    summary.asked++;
    if (now.outcome !== 'allow') continue;
    summary.askedNowAllowed++;
    if (past.answer !== null && past.answer !== 'accept') {
      summary.allowedThoughRefused.push({ recorded: past, now });
    }
  }
  return summary;
}
