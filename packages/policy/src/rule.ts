import type { AskSettings, DefaultAnswer, Outcome, Severity } from './decision.js';
import { SEVERITIES } from './decision.js';
import { durationMs } from './duration.js';
import { PolicyError, type PolicySourceLocation } from './errors.js';

/** One rule of the set: a Cedar policy and what its annotations say. */
export interface Rule {
  /** Its `@id`, or `FILE:LINE` when it has none. */
  id: string;
  /** `forbid` denies; `permit` with `@ask` asks; any other `permit` allows. */
  outcome: Outcome;
  /** Its `@reason`, or null. */
  reason: string | null;
  /** What it sets on a question (asking rules only). */
  ask: Partial<AskSettings>;
  location: PolicySourceLocation;
}

// Settings of a question, which only a rule that asks may carry.
const ASKING = [
  'audience',
  'quorum',
  'deadline',
  'default',
  'remind',
  'escalate',
  'requesterMayNotAnswer',
];
const KNOWN = new Set(['id', 'reason', 'ask', 'severity', ...ASKING]);
const WHO = /^@?[A-Za-z0-9][A-Za-z0-9_.@-]*$/;

/**
 * The rule of one parsed policy, from its effect and annotations; an unknown annotation, or one
 * out of range, is refused with where it is.
 */
export function ruleOf(
  effect: 'permit' | 'forbid',
  annotations: Record<string, string | null>,
  location: PolicySourceLocation,
): Rule {
  const where = `${location.file}:${location.line}`;
  const refuse = (name: string, why: string): never => {
    throw new PolicyError('invalid_annotation', `${where}: @${name}: ${why}`, { location });
  };
  const value = (name: string): string | undefined => {
    const given = annotations[name];
    return given === undefined ? undefined : (given ?? '');
  };
  for (const name of Object.keys(annotations)) {
    if (!KNOWN.has(name))
      refuse(name, `unknown annotation; use one of ${[...KNOWN].map((k) => `@${k}`).join(', ')}`);
  }
  const asks = value('ask') !== undefined;
  if (asks && effect === 'forbid') refuse('ask', 'a forbid rule denies; only a permit rule asks');
  for (const name of ASKING) {
    if (value(name) !== undefined && !asks) refuse(name, 'only a rule that asks (@ask) sets this');
  }
  const id = value('id');
  if (id !== undefined && !/^[A-Za-z0-9][A-Za-z0-9_.:*-]{0,99}$/.test(id)) {
    refuse('id', `"${id}" is not a rule id (1 to 100 letters, digits, '_', '.', ':', '*', '-')`);
  }
  const reason = value('reason');
  if (reason !== undefined && (reason.trim() === '' || reason.length > 500)) {
    refuse('reason', 'give 1 to 500 characters');
  }
  const ask: Partial<AskSettings> = {};
  const audience = value('audience');
  if (audience !== undefined) ask.audience = who('audience', audience, refuse);
  const quorum = value('quorum');
  if (quorum !== undefined) {
    const m = /^([1-9]\d{0,2})(?::([1-9]\d{0,2}))?$/.exec(quorum);
    if (!m)
      refuse('quorum', `"${quorum}": expected M or M:D, M approvals and D declines from 1 to 999`);
    ask.quorum = { approvals: Number(m?.[1]), declines: Number(m?.[2] ?? 1) };
  }
  const deadline = value('deadline');
  const fallback = value('default');
  if (fallback !== undefined && deadline === undefined) refuse('default', 'needs a @deadline');
  if (deadline !== undefined) {
    ask.deadline = {
      ms: duration('deadline', deadline, refuse),
      answer: answerOf(fallback, refuse),
    };
  }
  const remind = value('remind');
  if (remind !== undefined) ask.remindMs = duration('remind', remind, refuse);
  const escalate = value('escalate');
  if (escalate !== undefined) {
    const at = escalate.indexOf(':');
    if (at < 0) refuse('escalate', `"${escalate}": expected DURATION:WHO, e.g. 8h:lead+@ada`);
    const to = who('escalate', escalate.slice(at + 1), refuse);
    ask.escalate = { ms: duration('escalate', escalate.slice(0, at), refuse), ...to };
  }
  if (value('requesterMayNotAnswer') !== undefined) {
    if (value('requesterMayNotAnswer') !== '') refuse('requesterMayNotAnswer', 'takes no value');
    ask.requesterMayNotAnswer = true;
  }
  const severity = value('severity');
  if (severity !== undefined) {
    if (!SEVERITIES.includes(severity as Severity)) {
      refuse('severity', `"${severity}": expected one of ${SEVERITIES.join(', ')}`);
    }
    ask.severity = severity as Severity;
  }
  return {
    id: id ?? where,
    outcome: effect === 'forbid' ? 'deny' : asks ? 'ask' : 'allow',
    reason: reason ?? null,
    ask,
    location,
  };
}

function duration(name: string, text: string, refuse: (n: string, why: string) => never): number {
  const ms = durationMs(text);
  if (ms === undefined || ms <= 0) {
    refuse(name, `"${text}": expected a positive duration like 30s, 15m, 1h, 2d`);
  }
  return ms as number;
}

function who(
  name: string,
  text: string,
  refuse: (n: string, why: string) => never,
): { names: string[]; roles: string[] } {
  const parts = text.split(/[\s,+]+/).filter((part) => part !== '');
  if (parts.length === 0 || !parts.every((part) => WHO.test(part))) {
    refuse(name, `"${text}": expected roles and @names joined by +, e.g. finance+@ada`);
  }
  return {
    names: [...new Set(parts.filter((p) => p.startsWith('@')).map((p) => p.slice(1)))],
    roles: [...new Set(parts.filter((p) => !p.startsWith('@')))],
  };
}

function answerOf(
  text: string | undefined,
  refuse: (n: string, why: string) => never,
): DefaultAnswer {
  if (text === undefined || text === 'decline') return { action: 'decline', content: '' };
  if (text === 'cancel') return { action: 'cancel', content: '' };
  if (text.startsWith('accept:'))
    return { action: 'accept', content: text.slice('accept:'.length) };
  return refuse('default', `"${text}": expected decline, cancel or accept:TEXT`);
}
