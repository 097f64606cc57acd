import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  decisionCountsSince,
  type ExecutiveDatabase,
  type PolicyRule,
  type PolicySet,
  type RuleDecisionCounts,
  type ShadowDisagreement,
  shadowDisagreements,
} from '@x/executive';
import {
  MAX_POLICY_DAYS,
  type OutcomeCounts,
  type PoliciesResponse,
  type PolicyRuleView,
  type ShadowDisagreementView,
} from './contract/policies.js';
import { ApprovalCenterError } from './errors.js';
import { sendJson } from './http/send.js';

/** What the center reads of a policy set: `PolicySet` of `@x/policy` is one. */
export type ShownPolicySet = Pick<PolicySet, 'hash' | 'rules'>;

/** The Policies tab's sources: the active set, where its decisions are, and the shadow's disagreements. */
export interface PoliciesOptions {
  /**
   * The policy set that decides now, or a function giving it, asked at each request (so that a
   * set reloaded without a restart shows at once).
   */
  active: ShownPolicySet | (() => ShownPolicySet | Promise<ShownPolicySet>);
  /** The database its decisions are recorded in (`x_executive.policy_decisions`): the executive storage's `db`. */
  db: ExecutiveDatabase;
  /**
   * Whether a candidate set runs in shadow (`policyGate({ shadow })`): the tab then lists the
   * decisions on which it disagreed with the active one. Without it the page shows no shadow section.
   */
  shadow?: boolean;
}

/** How many disagreements the Policies tab lists at most. */
const SHADOW_LIMIT = 100;

const DAY_MS = 86_400_000;

/** `?days=N` of `GET /api/policies`, checked: 1 to {@link MAX_POLICY_DAYS}, default 7. */
function daysOf(url: URL): number {
  const text = url.searchParams.get('days');
  if (text === null) return 7;
  const days = Number(text);
  if (!/^\d+$/.test(text) || days < 1 || days > MAX_POLICY_DAYS) {
    throw new ApprovalCenterError(
      'invalid_request',
      `days takes a whole number from 1 to ${MAX_POLICY_DAYS}`,
    );
  }
  return days;
}

/**
 * Answers `GET /api/policies` (true), or leaves any other request (false): the active set's
 * hash and rules, what each rule decided in the last `days`, and the shadow's disagreements.
 */
export async function answerPoliciesRoute(
  options: PoliciesOptions,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<boolean> {
  if (url.pathname !== '/api/policies') return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    throw new ApprovalCenterError(
      'method_not_allowed',
      `${req.method} is not allowed here; use GET`,
    );
  }
  const days = daysOf(url);
  const since = new Date(Date.now() - days * DAY_MS);
  const { active, db, shadow } = options;
  const [set, counts, disagreements] = await Promise.all([
    typeof active === 'function' ? active() : active,
    decisionCountsSince(db, since),
    shadow ? shadowDisagreements(db, { since, limit: SHADOW_LIMIT }) : undefined,
  ]);
  sendJson(res, 200, policiesView(set, counts, { days, since, disagreements }));
  return true;
}

const NONE: OutcomeCounts = { allow: 0, deny: 0, ask: 0 };

/** The response of `GET /api/policies`, from the set, the counts by rule and the disagreements. */
export function policiesView(
  set: ShownPolicySet,
  counts: readonly RuleDecisionCounts[],
  window: { days: number; since: Date; disagreements: readonly ShadowDisagreement[] | undefined },
): PoliciesResponse {
  const byRule = new Map(counts.map(({ ruleId, ...decided }) => [ruleId, decided]));
  const ids = new Set(set.rules.map((rule) => rule.id));
  return {
    policySet: {
      hash: set.hash,
      rules: set.rules.map((rule) => ruleView(rule, byRule.get(rule.id) ?? NONE)),
    },
    days: window.days,
    since: window.since.toISOString(),
    otherRules: counts.flatMap(({ ruleId, ...decided }) =>
      ruleId === null || ids.has(ruleId) ? [] : [{ id: ruleId, decided }],
    ),
    withoutRule: byRule.get(null) ?? NONE,
    shadow: window.disagreements
      ? { disagreements: window.disagreements.map(disagreementView) }
      : null,
  };
}

/** A shadow disagreement as the page shows it: what each set decided, and what people answered. */
function disagreementView(found: ShadowDisagreement): ShadowDisagreementView {
  const { shadow } = found;
  return {
    decidedAt: found.decidedAt.toISOString(),
    conversationId: found.conversationId,
    tool: found.tool,
    arguments: found.arguments,
    token: found.token,
    active: {
      outcome: found.outcome,
      reason: found.reason,
      ruleIds: found.ruleIds,
      policyHash: found.policyHash,
    },
    candidate: {
      outcome: shadow.outcome,
      reason: shadow.reason,
      ruleIds: shadow.ruleIds,
      policyHash: shadow.policyHash,
      error: shadow.error,
    },
    answer: found.answer,
  };
}

/** One rule with its annotations' settings and what it decided. */
function ruleView(rule: PolicyRule, decided: OutcomeCounts): PolicyRuleView {
  const { ask } = rule;
  return {
    id: rule.id,
    outcome: rule.outcome,
    denial: rule.outcome === 'deny' ? 'hard' : rule.outcome === 'ask' ? 'soft' : null,
    reason: rule.reason,
    audience: ask.audience ?? null,
    quorum: ask.quorum ?? null,
    deadline: ask.deadline ?? null,
    remindMs: ask.remindMs ?? null,
    escalate: ask.escalate ?? null,
    requesterMayNotAnswer: ask.requesterMayNotAnswer ?? false,
    severity: ask.severity ?? null,
    location: { file: rule.location.file, line: rule.location.line },
    decided,
  };
}
