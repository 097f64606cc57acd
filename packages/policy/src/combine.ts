import type { AskSettings, Audience, DefaultAnswer } from './decision.js';
import { SEVERITIES } from './decision.js';
import type { Rule } from './rule.js';

// A tie between deadlines takes the default that runs nothing: decline, then cancel, then accept.
const CAUTION: readonly DefaultAnswer['action'][] = ['decline', 'cancel', 'accept'];

/** What the rules that matched say, one sentence per rule. */
export function reasonOf(rules: readonly Rule[], verb: string): string {
  return rules.map((rule) => `rule "${rule.id}": ${rule.reason ?? `${verb}`}`).join('; ');
}

/**
 * The question that several asking rules ask together: the union of their audiences, the
 * largest quorum (most approvals, fewest declines), the shortest deadline (its default; a tie
 * the most cautious), the earliest reminder and escalation (to everyone any of them names),
 * the requester barred if any bars them, the highest severity.
 */
export function combineAsks(rules: readonly Rule[]): AskSettings {
  const settings = rules.map((rule) => rule.ask);
  const audience = union(settings.map((s) => s.audience));
  const quorums = settings.flatMap((s) => (s.quorum ? [s.quorum] : []));
  const deadlines = settings.flatMap((s) => (s.deadline ? [s.deadline] : []));
  const escalations = settings.flatMap((s) => (s.escalate ? [s.escalate] : []));
  const reminders = settings.flatMap((s) => (s.remindMs ? [s.remindMs] : []));
  const severities = settings.flatMap((s) => (s.severity ? [SEVERITIES.indexOf(s.severity)] : []));
  const shortest = Math.min(...deadlines.map((d) => d.ms));
  const answer = deadlines
    .filter((d) => d.ms === shortest)
    .map((d) => d.answer)
    .sort((a, b) => CAUTION.indexOf(a.action) - CAUTION.indexOf(b.action))[0];
  const widened = union(escalations);
  return {
    audience,
    quorum:
      quorums.length === 0
        ? null
        : {
            approvals: Math.max(...quorums.map((q) => q.approvals)),
            declines: Math.min(...quorums.map((q) => q.declines)),
          },
    deadline: answer ? { ms: shortest, answer } : null,
    remindMs: reminders.length === 0 ? null : Math.min(...reminders),
    escalate:
      escalations.length === 0
        ? null
        : { ms: Math.min(...escalations.map((e) => e.ms)), ...widened },
    requesterMayNotAnswer: settings.some((s) => s.requesterMayNotAnswer === true),
    severity: severities.length === 0 ? null : (SEVERITIES[Math.max(...severities)] ?? null),
  };
}

function union(audiences: readonly (Audience | undefined)[]): Audience {
  const names = new Set<string>();
  const roles = new Set<string>();
  for (const audience of audiences) {
    for (const name of audience?.names ?? []) names.add(name);
    for (const role of audience?.roles ?? []) roles.add(role);
  }
  return { names: [...names], roles: [...roles] };
}
