import { optionLabel, shownOptions } from '@x/askuser';
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

/**
 * The `data` of a notification's payload (`{ type, timestamp, data }`, the Standard Webhooks
 * shape the executive's events are enqueued in); empty for a payload without one.
 */
export function eventDataOf(payload: unknown): EventData {
  return ((payload as { data?: EventData } | null)?.data ?? {}) as EventData;
}

/** The events that end a question: a message posted for it is updated to say so. */
export const QUESTION_ENDINGS: ReadonlySet<string> = new Set([
  'question.answered',
  'question.cancelled',
  'question.expired',
]);

/** The words of each option of a question, as a person picks it (a `{ label }` object's label). */
export function optionLabels(options: unknown): string[] {
  return (shownOptions(options) ?? []).map(optionLabel);
}
