import type { Pending } from '@x/askuser';

/** The kinds of event the flows announce (Standard Webhooks `type`s). */
export const EVENT_KINDS = [
  'question.created',
  'question.reminded',
  'question.escalated',
  'question.answered',
  'question.expired',
  'question.cancelled',
  'run.completed',
  'run.failed',
] as const;

/** One kind of event the flows announce. */
export type EventKind = (typeof EVENT_KINDS)[number];

/** What a receiver may look at of the question an event is about, to route it. */
export interface QuestionFacts {
  /** The human tool that asked (`ask_user`, `approve`). */
  tool: string;
  priority: number;
  audience: { names: readonly string[]; roles: readonly string[] };
}

/** One event: its kind, what a receiver gets, and the question's facts if any. */
export interface ExecutiveEvent {
  kind: EventKind;
  /** The payload's `data`: ids, the question, the answer, the error. */
  data: Record<string, unknown>;
  question?: QuestionFacts;
}

/**
 * Where the flows announce what happened (a question asked, answered, expired; a run ended):
 * `record` writes inside `tx`, the transaction of the event itself, so the announcement
 * commits with it or not at all (an outbox); `wants` says whether an event of a kind would be
 * written at all, so that a flow reads nothing and keeps its fastest path when none would.
 *
 * @example
 * const events: ExecutiveEvents<unknown> = {
 *   wants: (kind) => kind === 'run.failed',
 *   record: async (_tx, event) => console.log(event.kind, event.data.runId),
 * };
 */
export interface ExecutiveEvents<Tx> {
  wants(kind: EventKind): boolean;
  record(tx: Tx, event: ExecutiveEvent): Promise<void>;
}

/**
 * What an event about a question tells of it: the askuser store's fields of the question
 * (`Pending`), with the person it acts for and the resume context (whose `run` names the run)
 * when known.
 */
export type QuestionFields = Pick<
  Pending,
  'token' | 'conversationId' | 'kind' | 'question' | 'options' | 'priority' | 'audience'
> &
  Partial<Pick<Pending, 'requester' | 'resumeContext'>>;

/** An event about a question: its ids and what it asks, and `extra` (the answer, ...). */
export function questionEvent(
  kind: EventKind,
  pause: QuestionFields,
  extra: Record<string, unknown> = {},
): ExecutiveEvent {
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

/** An event about a run: its ids, the person it acts for, and `extra` (the error, ...). */
export function runEvent(
  kind: 'run.completed' | 'run.failed',
  run: { runId: string; conversationId: string; meta?: unknown },
  extra: Record<string, unknown> = {},
): ExecutiveEvent {
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
