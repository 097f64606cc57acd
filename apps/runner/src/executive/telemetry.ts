import type { AnsweredPause } from '@x/askuser';
import type { Model } from '../agent/model-port.js';

/** How a run ended, as the counters count it. */
export type RunEnding = 'completed' | 'failed' | 'cancelled';

/**
 * What the executive tells whoever watches this process (the metrics of `serve` and
 * `wake`): plain calls with durations in seconds and low-cardinality labels, never an id.
 */
export interface ExecutiveTelemetry {
  /** A question's wait ended: from its creation to its answer (or the deadline applied). */
  humanWait(
    kind: string,
    outcome: 'accept' | 'decline' | 'cancel' | 'expired',
    seconds: number,
  ): void;
  /** From a question's answer to the model call of the attempt that resumes from it. */
  answerToResume(seconds: number): void;
  modelCall(model: string, outcome: 'ok' | 'error', seconds: number): void;
  /** A run ended; `seconds` from its start, when known. */
  runEnded(ending: RunEnding, seconds?: number): void;
  /** A run was resumed at its question's deadline, with the default. */
  runExpired(): void;
  /** A failed attempt was scheduled to be tried again. */
  retryScheduled(): void;
  /** A worker of this process lost a run's lease to another. */
  leaseLost(): void;
  /** An answer was refused: `conflict` (answered already), `not_found`, `forbidden`, `expired`, `usage`. */
  answerRefused(reason: string): void;
}

/**
 * The process's watcher, if any: set once at start by a command that exports metrics.
 * Unset (the default) every hook is one property read, nothing is allocated.
 */
export const watching: { telemetry?: ExecutiveTelemetry | undefined } = {};

/** The model as the executive calls it: timed when watched, else the model itself. */
export function watchedModel(model: Model): Model {
  const { telemetry } = watching;
  if (!telemetry) return model;
  return {
    id: model.id,
    async generate(request) {
      const started = performance.now();
      try {
        const reply = await model.generate(request);
        telemetry.modelCall(model.id, 'ok', (performance.now() - started) / 1000);
        return reply;
      } catch (error) {
        telemetry.modelCall(model.id, 'error', (performance.now() - started) / 1000);
        throw error;
      }
    },
  };
}

/**
 * Observes the wait an attempt starts from: the question's wait (on the first attempt), and,
 * when the turn `resumes` (not a cancel), from its answer to `now`, when the model call starts.
 */
export function observeResume(
  telemetry: ExecutiveTelemetry,
  pause: AnsweredPause,
  attempt: number,
  now: number,
  resumes: boolean,
): void {
  const answeredAt = (pause.expiredAt ?? pause.resumedAt).getTime();
  if (attempt <= 1) {
    const outcome = pause.expiredAt ? 'expired' : pause.answer.action;
    telemetry.humanWait(pause.kind, outcome, (answeredAt - pause.createdAt.getTime()) / 1000);
  }
  if (resumes) telemetry.answerToResume(Math.max(0, now - answeredAt) / 1000);
}
