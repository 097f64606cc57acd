import type { ModelUsage } from './model-port.js';

/** How a run ended, as the counters count it. */
export type RunEnding = 'completed' | 'failed' | 'cancelled';

/**
 * What the executive tells whoever watches it (an app's metrics): plain calls with durations
 * in seconds and low-cardinality labels, never an id.
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
  /** A notification was delivered on `channel`, or failed for good there (its attempts used up). */
  notification(channel: string, outcome: 'delivered' | 'failed'): void;
}

/** A question's wait, as {@link ExecutiveTracer.humanWait} records it. */
export interface HumanWait {
  /** The traceparent of the turn that asked, stored with the pause. */
  parent: string | undefined;
  startedAt: Date;
  conversationId: string;
  toolCallId: string;
  /** The tool the model called: `ask_user`, `approve`, or a gated tool waiting for approval. */
  toolName: string;
  kind: string;
  priority: number;
  /** Names and roles its audience admits (0: anyone). */
  audienceSize: number;
  outcome: 'accept' | 'decline' | 'cancel' | 'expired';
}

/**
 * A turn's `invoke_agent` span, handed to what runs in it: the parent of its model and tool
 * calls' spans, passed explicitly because a context manager would tax every await.
 */
export interface TurnSpan {
  /** Its W3C traceparent, stored with the run and the questions the turn asks. */
  readonly traceparent: string;
  /** Runs one model call in a `chat {model}` span; `call` reports the tokens it used to `usage`. */
  chat<T>(model: string, call: (usage: (usage: ModelUsage) => void) => Promise<T>): Promise<T>;
  /** Runs one tool call in an `execute_tool {name}` span. */
  tool<T>(name: string, toolCallId: string, run: () => T): T;
}

/**
 * The executive's spans (OpenTelemetry's GenAI conventions and a span of the human wait),
 * when traces are on. Trace contexts travel as W3C `traceparent` strings, stored with the
 * run (`meta.traceparent`) and the pause (`resumeContext.traceparent`).
 */
export interface ExecutiveTracer {
  /** Runs `turn` in an `invoke_agent` span, a child of `parent` (a traceparent) when given. */
  turn<T>(
    about: { conversationId: string; runId: string; model: string },
    parent: string | undefined,
    turn: (span: TurnSpan) => Promise<T>,
  ): Promise<T>;
  /** Records a question's wait, from its asking to now, as an `await_human` span of the turn that asked. */
  humanWait(wait: HumanWait): void;
  /**
   * The trace id of the latest turn in this process of the run, else of the conversation (a
   * conversation has one open run at a time), if any: for the logs.
   */
  traceId(about: { runId?: string; conversationId?: string }): string | undefined;
}
