import type {
  OutcomeCounts,
  PoliciesResponse,
  PolicyRuleView,
  ShadowDisagreementView,
} from '@x/approval-center/contract';
import { ApiError, api } from './api-client.js';
import { byId, type Child, h, replace } from './dom.js';
import { say, ui } from './page.js';
import { showTab } from './queue.js';
import { readable } from './rows.js';
import { shown } from './shown.js';

/**
 * Offers the Policies tab when the server has a policy set to show (a 404 says it has none),
 * and loads it again each time it is opened.
 */
export async function offerPolicies(): Promise<void> {
  try {
    renderPolicies(await api.policies());
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return;
    say(`Could not load the policies: ${e instanceof Error ? e.message : e}`);
  }
  ui.tabPolicies.hidden = false;
  ui.tabPolicies.addEventListener('click', () => {
    showTab('policies');
    void loadPolicies();
  });
  byId('policies-refresh').addEventListener('click', () => void loadPolicies());
}

async function loadPolicies(): Promise<void> {
  try {
    renderPolicies(await api.policies());
  } catch (e) {
    say(`Could not load the policies: ${e instanceof Error ? e.message : e}`);
  }
}

/** The active set's hash, its rules with what each decided, and the shadow section when there is one. */
function renderPolicies(policies: PoliciesResponse): void {
  const { policySet, days } = policies;
  replace(
    byId('policies-summary'),
    `Active policy set `,
    h('code', { id: 'policy-hash' }, policySet.hash),
    ` · ${policySet.rules.length} rule${policySet.rules.length === 1 ? '' : 's'}`,
  );
  byId('policies-days').textContent = String(days);
  const other = policies.otherRules.map(({ id, decided }) =>
    countsRow(
      [h('code', {}, shown(id, true)), h('span', { class: 'hint' }, ' (not in the active set)')],
      '',
      '',
      decided,
      id,
    ),
  );
  const none = policies.withoutRule;
  const unmatched =
    none.allow + none.deny + none.ask > 0
      ? [countsRow(['no rule (none matched, or the arguments did not fit)'], '', '', none)]
      : [];
  replace(byId('policies-rules'), ...policySet.rules.map(ruleRow), ...other, ...unmatched);
  const section = byId('shadow');
  section.hidden = policies.shadow === null;
  if (policies.shadow) {
    const rows = policies.shadow.disagreements.map(disagreementRow);
    replace(
      byId('shadow-list'),
      ...(rows.length > 0
        ? rows
        : [h('tr', {}, h('td', { colspan: 5, class: 'hint' }, 'No disagreement in this window.'))]),
    );
  }
}

const decides: Record<PolicyRuleView['outcome'], string> = {
  deny: 'denies (hard)',
  ask: 'asks (soft)',
  allow: 'allows',
};

function ruleRow(rule: PolicyRuleView) {
  return countsRow(
    [
      h('code', {}, shown(rule.id, true)),
      rule.reason ? h('span', { class: 'reason' }, ` ${shown(rule.reason)}`) : null,
      h('span', { class: 'where' }, ` ${shown(rule.location.file, true)}:${rule.location.line}`),
    ],
    decides[rule.outcome],
    settingsText(rule),
    rule.decided,
    rule.id,
    rule.denial ?? 'allow',
  );
}

function countsRow(
  name: Child[],
  outcome: string,
  settings: string,
  decided: OutcomeCounts,
  id?: string,
  denial?: string,
) {
  return h(
    'tr',
    { 'data-rule': id, 'data-denial': denial },
    h('th', { scope: 'row' }, ...name),
    h('td', { class: 'decides' }, outcome),
    h('td', { class: 'settings' }, settings),
    h('td', { class: 'allow' }, decided.allow),
    h('td', { class: 'deny' }, decided.deny),
    h('td', { class: 'ask' }, decided.ask),
  );
}

/** A duration as the annotations write it, in its largest whole unit: 1 d, 8 h, 15 min, 90 s. */
function duration(ms: number): string {
  const units = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
  ] as const;
  for (const [unit, size] of units) if (ms % size === 0) return `${ms / size} ${unit}`;
  return `${ms / 1000} s`;
}

const who = ({ names, roles }: { names: string[]; roles: string[] }) =>
  shown([...roles, ...names.map((n) => `@${n}`)].join(', '), true);

/** What an asking rule sets on its question: audience, quorum, deadline, ... in words. */
function settingsText(rule: PolicyRuleView): string {
  const parts: string[] = [];
  if (rule.audience) parts.push(`audience ${who(rule.audience)}`);
  if (rule.quorum) {
    const { approvals, declines } = rule.quorum;
    parts.push(`quorum ${approvals} approval${approvals === 1 ? '' : 's'}, ${declines} to decline`);
  }
  if (rule.deadline) {
    const { action, content } = rule.deadline.answer;
    parts.push(
      `deadline ${duration(rule.deadline.ms)}, then ${action}${content ? ` “${shown(content)}”` : ''}`,
    );
  }
  if (rule.remindMs) parts.push(`reminder after ${duration(rule.remindMs)}`);
  if (rule.escalate)
    parts.push(`escalates after ${duration(rule.escalate.ms)} to ${who(rule.escalate)}`);
  if (rule.requesterMayNotAnswer) parts.push('not the requester');
  if (rule.severity) parts.push(`severity ${rule.severity}`);
  return parts.join(' · ');
}

const outcomeWords = { allow: 'allow', deny: 'deny', ask: 'ask' } as const;

function disagreementRow(d: ShadowDisagreementView) {
  const side = (s: ShadowDisagreementView['active'], error?: string | null) =>
    h(
      'td',
      {},
      h('strong', {}, outcomeWords[s.outcome]),
      ` ${shown(s.reason)}`,
      error ? h('span', { class: 'error' }, ` (deciding failed: ${shown(error)})`) : null,
    );
  return h(
    'tr',
    { 'data-token': d.token ?? undefined },
    h('td', {}, h('time', { datetime: d.decidedAt }, new Date(d.decidedAt).toLocaleString())),
    h(
      'td',
      {},
      h('code', {}, shown(d.tool, true)),
      ` ${readable(d.arguments, true)} · ${shown(d.conversationId, true)}`,
    ),
    side(d.active),
    side(d.candidate, d.candidate.error),
    h('td', {}, d.answer ?? (d.token ? 'not yet' : '—')),
  );
}
