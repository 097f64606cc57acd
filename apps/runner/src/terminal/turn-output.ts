import type { ModelRetry, TurnObserver } from '@x/executive';
import type { Output } from './output.js';

/** Prints a running turn's events, tagged with `extra` in JSON mode. */
export function observer(out: Output, extra: Record<string, unknown> = {}): TurnObserver {
  return {
    event: (event) => out.event(out.json ? { ...event, ...extra } : event),
    modelCall: () => out.record({ type: 'model-call', ...extra }, undefined),
    modelRetry: (retry) => modelRetried(out, retry, extra),
  };
}

/**
 * Marks a retried model call: a `model-retry` event, and a line for people, so that a
 * reader drops the text the failed attempt streamed before it.
 */
export function modelRetried(
  out: Output,
  { attempt, reason, waitMs }: ModelRetry,
  extra: Record<string, unknown> = {},
): void {
  out.record(
    { type: 'model-retry', attempt, reason, retryInMs: waitMs, ...extra },
    `  ↻ model call attempt ${attempt} failed (${reason}); the text above is void, trying again`,
  );
}

/** How a worker's question is named to the operator: its source thread and sub-task. */
export function workerLabel(worker: string, conversationId: string, task: string): string {
  return `worker ${worker} of conversation ${conversationId} (via delegate): ${task}`;
}
