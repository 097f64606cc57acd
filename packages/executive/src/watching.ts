import type { AnsweredPause, AnsweredQuestion, Pending } from '@x/askuser';
import type { ToolUseBlock } from '@x/wire';
import type { Model } from './model-port.js';
import type { ExecutiveTelemetry, ExecutiveTracer, HumanWait, TurnSpan } from './telemetry.js';

/**
 * Who watches the executive, if anyone: read at each call, so an app may set its fields once
 * at start. Unset, every hook is one property read and nothing is allocated.
 */
export interface Watching {
  telemetry?: ExecutiveTelemetry | undefined;
  tracer?: ExecutiveTracer | undefined;
}

/** The model as a turn calls it: timed and traced when watched, else the model itself. */
export function watchedModel(watching: Watching, model: Model, turn?: TurnSpan): Model {
  const { telemetry } = watching;
  if (!telemetry && !turn) return model;
  const timed = async (request: Parameters<Model['generate']>[0]) => {
    const started = performance.now();
    try {
      const reply = await model.generate(request);
      telemetry?.modelCall(model.id, 'ok', (performance.now() - started) / 1000);
      return reply;
    } catch (error) {
      telemetry?.modelCall(model.id, 'error', (performance.now() - started) / 1000);
      throw error;
    }
  };
  return {
    id: model.id,
    generate: turn
      ? (request) =>
          turn.chat(model.id, (usage) =>
            timed({
              ...request,
              onUsage: (used) => {
                usage(used);
                request.onUsage?.(used);
              },
            }),
          )
      : timed,
  };
}

/** The trace context a run or a pause stored (`traceparent` in its JSON), if any. */
export function storedTraceparent(value: unknown): string | undefined {
  const traceparent = (value as { traceparent?: unknown } | null)?.traceparent;
  return typeof traceparent === 'string' ? traceparent : undefined;
}

/** Records the wait of an answered or expired question, when traces are on. */
export function traceWait(
  watching: Watching,
  pause: AnsweredQuestion | Pending,
  outcome: HumanWait['outcome'] = expiredOrAnswered(pause),
): void {
  watching.tracer?.humanWait({
    parent: storedTraceparent(pause.resumeContext),
    startedAt: pause.createdAt,
    conversationId: pause.conversationId,
    toolCallId: pause.toolCallId,
    toolName: gatedToolOf(pause.resumeContext) ?? pause.kind,
    kind: pause.kind,
    priority: pause.priority,
    audienceSize: pause.audience.names.length + pause.audience.roles.length,
    outcome,
  });
}

/** The gated tool a pause's stored context names, if it is one's approval. */
function gatedToolOf(value: unknown): string | undefined {
  const tool = (value as { gated?: { tool?: unknown } } | null)?.gated?.tool;
  return typeof tool === 'string' ? tool : undefined;
}

function expiredOrAnswered(pause: AnsweredQuestion | Pending): HumanWait['outcome'] {
  const answered = pause as Partial<AnsweredPause>;
  return answered.expiredAt ? 'expired' : (answered.answer?.action ?? 'accept');
}

/** `runTurn`'s option that runs each tool call in an `execute_tool` span of `turn`, if traced. */
export function tracedTools(turn: TurnSpan | undefined): {
  toolRun?: <T>(use: ToolUseBlock, run: () => T) => T;
} {
  return turn ? { toolRun: (use, run) => turn.tool(use.name, use.id, run) } : {};
}

/** Runs a turn in an `invoke_agent` span when traces are on (`span` undefined when off). */
export function tracedTurn<T>(
  watching: Watching,
  about: { conversationId: string; runId: string; model: string },
  parent: string | undefined,
  turn: (span: TurnSpan | undefined) => Promise<T>,
): Promise<T> {
  const { tracer } = watching;
  return tracer ? tracer.turn(about, parent, turn) : turn(undefined);
}

/** A question's wait, as an attempt that resumes from it observes it. */
export interface ObservedWait {
  kind: string;
  outcome: HumanWait['outcome'];
  createdAt: Date;
  /** When it was answered (or its deadline applied). */
  answeredAt: Date;
}

/**
 * Observes the wait an attempt starts from: the question's wait (on the first attempt), and,
 * when the turn `resumes` (not a cancel), from its answer to `now`, when the model call starts.
 */
export function observeResume(
  telemetry: ExecutiveTelemetry,
  wait: ObservedWait,
  attempt: number,
  now: number,
  resumes: boolean,
): void {
  const answeredAt = wait.answeredAt.getTime();
  if (attempt <= 1) {
    telemetry.humanWait(wait.kind, wait.outcome, (answeredAt - wait.createdAt.getTime()) / 1000);
  }
  if (resumes) telemetry.answerToResume(Math.max(0, now - answeredAt) / 1000);
}
