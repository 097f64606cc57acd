import {
  type ExecutiveEvent,
  type ExecutiveEvents,
  outboxEvents as executiveOutbox,
} from '@x/executive';
import { type Env, type EventKind, type NotifyRule, notifyRules } from '../config/index.js';
import type { Db, Storage } from '../storage/index.js';

export { EVENT_KINDS, type EventKind } from '../config/index.js';

export { notifyRules };

/** Whether `rule` takes `event`: its kind, and each filter it names (a priority is a floor). */
export function ruleMatches(rule: NotifyRule, event: Pick<ExecutiveEvent, 'kind' | 'question'>) {
  const kind = rule.kind.endsWith('*')
    ? event.kind.startsWith(rule.kind.slice(0, -1))
    : event.kind === rule.kind;
  if (!kind) return false;
  const q = event.question;
  if (rule.tool !== undefined && q?.tool !== rule.tool) return false;
  if (rule.priority !== undefined && !(q && q.priority >= Number(rule.priority))) return false;
  if (rule.audience !== undefined) {
    const { names = [], roles = [] } = q?.audience ?? {};
    if (!names.includes(rule.audience) && !roles.includes(rule.audience)) return false;
  }
  return true;
}

/** The events that end a question: its Slack message, if it was posted one, says so. */
const ENDINGS: readonly EventKind[] = [
  'question.answered',
  'question.cancelled',
  'question.expired',
];

/**
 * The channels `event` goes to under `rules`, each once. The end of a question goes to Slack
 * also when only its creation did, so that its message is updated.
 */
export function channelsFor(rules: readonly NotifyRule[], event: ExecutiveEvent): string[] {
  const created = { ...event, kind: 'question.created' as const };
  const follows = (rule: NotifyRule) =>
    rule.channel === 'slack' && ENDINGS.includes(event.kind) && ruleMatches(rule, created);
  return [
    ...new Set(
      rules.filter((rule) => ruleMatches(rule, event) || follows(rule)).map((r) => r.channel),
    ),
  ];
}

/** Whether any rule could take an event of `kind`: else its transaction need write nothing. */
function anyRouteFor(kind: EventKind, env?: Env): boolean {
  const takes = (rule: NotifyRule, k: EventKind) =>
    rule.kind.endsWith('*') ? k.startsWith(rule.kind.slice(0, -1)) : rule.kind === k;
  return notifyRules(env).some(
    (rule) =>
      takes(rule, kind) ||
      (rule.channel === 'slack' && ENDINGS.includes(kind) && takes(rule, 'question.created')),
  );
}

/**
 * The executive's events port over the notification outbox of `storage` (`outboxEvents` of
 * `@x/executive`), routed by the runner's rules: an event's notifications go to the channels
 * {@link channelsFor} gives it, in the event's own transaction; an event no rule takes is
 * not wanted.
 */
export function outboxEvents(storage: Storage): ExecutiveEvents<Db> {
  return executiveOutbox(storage, {
    channels: (event) => channelsFor(notifyRules(), event),
    wants: (kind) => anyRouteFor(kind),
  });
}
