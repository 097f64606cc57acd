import { randomUUID } from 'node:crypto';
import { type Env, type EventKind, type NotifyRule, notifyRules } from '../config/index.js';
import type { Db, Storage } from '../storage/index.js';

export { EVENT_KINDS, type EventKind } from '../config/index.js';

/** What the routing rules look at of the question an event is about. */
export interface QuestionFacts {
  /** The human tool that asked (`ask_user`, `approve`). */
  tool: string;
  priority: number;
  audience: { names: readonly string[]; roles: readonly string[] };
}

/** One event to announce: its kind, what a receiver gets, and the question's facts if any. */
export interface NotifyEvent {
  kind: EventKind;
  /** The Standard Webhooks payload's `data`: ids, the question, the answer, the error. */
  data: Record<string, unknown>;
  question?: QuestionFacts;
}

export { notifyRules };

/** Whether `rule` takes `event`: its kind, and each filter it names (a priority is a floor). */
export function ruleMatches(rule: NotifyRule, event: Pick<NotifyEvent, 'kind' | 'question'>) {
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
export function channelsFor(rules: readonly NotifyRule[], event: NotifyEvent): string[] {
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
export function anyRouteFor(kind: EventKind, env?: Env): boolean {
  const takes = (rule: NotifyRule, k: EventKind) =>
    rule.kind.endsWith('*') ? k.startsWith(rule.kind.slice(0, -1)) : rule.kind === k;
  return notifyRules(env).some(
    (rule) =>
      takes(rule, kind) ||
      (rule.channel === 'slack' && ENDINGS.includes(kind) && takes(rule, 'question.created')),
  );
}

/** Whether any rule takes an answer's event: else an answer's transaction writes no notification. */
export function answersNotified(env?: Env): boolean {
  return anyRouteFor('question.answered', env) || anyRouteFor('question.cancelled', env);
}

/**
 * Writes `event`'s notifications into the outbox inside `tx`, the event's own transaction:
 * they commit with it, or not at all. Nothing when no rule takes it. Returns the event id.
 */
export async function recordEvent(
  tx: Db,
  storage: Storage,
  event: NotifyEvent,
): Promise<string | undefined> {
  const channels = channelsFor(notifyRules(), event);
  if (channels.length === 0) return undefined;
  const eventId = `evt_${randomUUID()}`;
  const payload = { type: event.kind, timestamp: new Date().toISOString(), data: event.data };
  await storage
    .notifications(tx)
    .enqueue(channels.map((channel) => ({ eventId, kind: event.kind, channel, payload })));
  return eventId;
}

/** What a question event tells of its question (the askuser store's fields). */
export interface QuestionFields {
  token: string;
  conversationId: string;
  /** The human tool that asked. */
  kind: string;
  question: string;
  options: unknown;
  priority: number;
  audience: { names: string[]; roles: string[] };
  requester?: string | null;
  resumeContext?: unknown;
}

/** An event about a question: its ids and what it asks, and `extra` (the answer, ...). */
export function questionEvent(
  kind: EventKind,
  pause: QuestionFields,
  extra: Record<string, unknown> = {},
): NotifyEvent {
  const runId = (pause.resumeContext as { run?: unknown } | null | undefined)?.run;
  return {
    kind,
    data: {
      token: pause.token,
      conversationId: pause.conversationId,
      ...(typeof runId === 'string' ? { runId } : {}),
      tool: pause.kind,
      question: pause.question,
      options: pause.options ?? null,
      priority: pause.priority,
      audience: pause.audience,
      requester: pause.requester ?? null,
      ...extra,
    },
    question: { tool: pause.kind, priority: pause.priority, audience: pause.audience },
  };
}

/**
 * Records, inside the answer's transaction, that the questions `tokens` were answered
 * (`question.cancelled` for a cancel), by whom and through what channel. Reads nothing
 * when no rule takes either kind.
 */
export async function recordAnswered(
  tx: Db,
  storage: Storage,
  tokens: readonly string[],
  channel?: string,
): Promise<void> {
  if (!answersNotified()) return;
  for (const token of tokens) {
    const answered = await storage.pauses(tx).getAnswer(token);
    if (!answered) continue;
    const kind = answered.answer.action === 'cancel' ? 'question.cancelled' : 'question.answered';
    await recordEvent(
      tx,
      storage,
      questionEvent(kind, answered, {
        answer: answered.answer,
        answeredBy: answered.answeredBy,
        ...(channel === undefined ? {} : { channel }),
      }),
    );
  }
}

/** An event about a run: its ids, the person it acts for, and `extra` (the error, ...). */
export function runEvent(
  kind: 'run.completed' | 'run.failed',
  run: { runId: string; conversationId: string; meta?: unknown },
  extra: Record<string, unknown> = {},
): NotifyEvent {
  const requester = (run.meta as { requester?: unknown } | null | undefined)?.requester;
  return {
    kind,
    data: {
      runId: run.runId,
      conversationId: run.conversationId,
      requester: typeof requester === 'string' ? requester : null,
      ...extra,
    },
  };
}

/** What a notification's payload `data` may hold, as the channels read it. */
export interface EventData {
  token?: string;
  conversationId?: string;
  tool?: string;
  question?: string;
  options?: unknown;
  priority?: number;
  runId?: string;
  error?: string;
  answer?: { action: string; content: string };
  answeredBy?: string | null;
  deadline?: { at: string };
  /** Who may answer the question: operator names and roles (both empty: anyone). */
  audience?: { names: string[]; roles: string[] };
}

/** The `data` of a notification's payload ({@link recordEvent} wrote it). */
export function eventDataOf(payload: unknown): EventData {
  return ((payload as { data?: EventData } | null)?.data ?? {}) as EventData;
}
