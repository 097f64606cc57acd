import { QUESTION_ENDINGS } from './event-data.js';

/** The channels a notification goes out on: the senders this package has. */
export const CHANNELS = ['webhook', 'email', 'slack'] as const;

/** One channel a notification goes out on. */
export type Channel = (typeof CHANNELS)[number];

/** Which events go to a channel: a kind (or a prefix ending in `*`) and optional filters. */
export interface NotifyRule {
  channel: Channel;
  /** An event kind, or a prefix ending in `*` (`question.*`, `*`). */
  kind: string;
  /** Only questions of this human tool (`approve`, `ask_user`). */
  tool?: string;
  /** Only questions of this priority or higher. */
  priority?: string;
  /** Only questions whose audience names this role or operator. */
  audience?: string;
}

/** What a rule looks at of an event: its kind and the facts of its question, if any. */
export interface RoutedEvent {
  kind: string;
  question?:
    | {
        tool: string;
        priority: number;
        audience?: { names?: readonly string[]; roles?: readonly string[] };
      }
    | undefined;
}

const RULE_FILTERS = ['tool', 'priority', 'audience'] as const;

const kindMatches = (pattern: string, kind: string) =>
  pattern.endsWith('*') ? kind.startsWith(pattern.slice(0, -1)) : kind === pattern;

/**
 * The rules of `text`, `CHANNEL=KIND[?FILTER=VALUE&...]` separated by commas, KIND one of
 * `kinds` or a prefix of one ending in `*`, filters `tool`, `priority` and `audience`
 * (`webhook=question.*?tool=approve&priority=5,slack=run.failed`); undefined when any rule
 * names an unknown channel, kind or filter.
 *
 * @example
 * const rules = parseNotifyRules('webhook=*,slack=question.created?tool=approve', EVENT_KINDS);
 */
export function parseNotifyRules(text: string, kinds: readonly string[]): NotifyRule[] | undefined {
  const rules: NotifyRule[] = [];
  for (const part of text.split(',')) {
    const match = /^\s*([a-z]+)=([a-z.]*\*?)(?:\?([^\s]*))?\s*$/.exec(part);
    const channel = CHANNELS.find((c) => c === match?.[1]);
    const kind = match?.[2] ?? '';
    if (!match || !channel || !kinds.some((k) => kindMatches(kind, k))) return undefined;
    const rule: NotifyRule = { channel, kind };
    for (const [key, value] of new URLSearchParams(match[3] ?? '')) {
      const filter = RULE_FILTERS.find((f) => f === key);
      if (!filter || value === '') return undefined;
      rule[filter] = value;
    }
    rules.push(rule);
  }
  return rules;
}

/** Whether `rule` takes `event`: its kind, and each filter it names (a priority is a floor). */
export function ruleMatches(rule: NotifyRule, event: RoutedEvent): boolean {
  if (!kindMatches(rule.kind, event.kind)) return false;
  const q = event.question;
  if (rule.tool !== undefined && q?.tool !== rule.tool) return false;
  if (rule.priority !== undefined && !(q && q.priority >= Number(rule.priority))) return false;
  if (rule.audience !== undefined) {
    const { names = [], roles = [] } = q?.audience ?? {};
    if (!names.includes(rule.audience) && !roles.includes(rule.audience)) return false;
  }
  return true;
}

/** Whether `rule` sends Slack the end of a question it sent the creation of (to update its message). */
const followsToSlack = (rule: NotifyRule, event: RoutedEvent, takes: typeof ruleMatches) =>
  rule.channel === 'slack' &&
  QUESTION_ENDINGS.has(event.kind) &&
  takes(rule, { ...event, kind: 'question.created' });

/**
 * The channels `event` goes to under `rules`, each once. The end of a question goes to Slack
 * also when only its creation did, so that its message is updated.
 */
export function channelsFor(rules: readonly NotifyRule[], event: RoutedEvent): Channel[] {
  const taken = rules.filter(
    (rule) => ruleMatches(rule, event) || followsToSlack(rule, event, ruleMatches),
  );
  return [...new Set(taken.map((rule) => rule.channel))];
}

/**
 * Whether any of `rules` could take an event of `kind`, whatever its question: when none
 * could, the event's transaction need write nothing.
 */
export function anyRouteFor(rules: readonly NotifyRule[], kind: string): boolean {
  const byKind = (rule: NotifyRule, event: RoutedEvent) => kindMatches(rule.kind, event.kind);
  return rules.some((rule) => byKind(rule, { kind }) || followsToSlack(rule, { kind }, byKind));
}
