import {
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { ExecutiveTracer, HumanWait, ModelUsage, TurnSpan } from '@x/executive';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The W3C `traceparent` of a span: how a trace context is stored with a run and a pause. */
function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

/** How many trace ids of runs and conversations the logs can name (the latest turns here). */
const TRACE_IDS_KEPT = 1000;

/** The context of a stored `traceparent` (another process's span), or a root. */
function contextOf(traceparent: string | undefined): Context {
  const match = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!match) return ROOT_CONTEXT;
  const [, traceId = '', spanId = '', flags = '01'] = match;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16),
    isRemote: true,
  });
}

/** `anthropic:claude-x` → provider `anthropic`, model `claude-x`. */
function modelAttributes(model: string): Record<string, string> {
  const [provider = model, name = model] = model.split(/:(.*)/s);
  return { 'gen_ai.provider.name': provider, 'gen_ai.request.model': name };
}

/** Sets what a model call reports of its tokens as the GenAI usage attributes. */
function setUsage(span: Span, usage: ModelUsage): void {
  if (usage.inputTokens !== undefined) {
    span.setAttribute('gen_ai.usage.input_tokens', usage.inputTokens);
  }
  if (usage.outputTokens !== undefined) {
    span.setAttribute('gen_ai.usage.output_tokens', usage.outputTokens);
  }
}

function failed(span: Span, error: unknown): never {
  span.recordException(error as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
  throw error;
}

/**
 * Starts this process's traces: a tracer provider exporting over OTLP/HTTP, configured by
 * the standard OTEL_* variables (endpoint, headers, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
 * OTEL_BSP_*). Loaded only when they ask for traces.
 * @returns the executive's tracer, and the shutdown that flushes what is left.
 */
export function startTracing(): { tracer: ExecutiveTracer; shutdown(): Promise<void> } {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'runner' }).merge(
      detectResources({ detectors: [envDetector] }),
    ),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // Not registered: no global context manager (AsyncLocalStorage taxes every await of the
  // process); each span is given its parent, a turn's through its TurnSpan.
  const otel = provider.getTracer('runner');
  const traceIds = new Map<string, string>();
  const tracer: ExecutiveTracer = {
    turn(about, parent, run) {
      const parentContext = contextOf(parent);
      const span = otel.startSpan(
        'invoke_agent',
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            'gen_ai.operation.name': 'invoke_agent',
            'gen_ai.agent.name': 'runner',
            'gen_ai.conversation.id': about.conversationId,
            'runner.run.id': about.runId,
            ...modelAttributes(about.model),
          },
        },
        parentContext,
      );
      for (const key of [`run:${about.runId}`, `conversation:${about.conversationId}`]) {
        traceIds.delete(key);
        traceIds.set(key, span.spanContext().traceId);
      }
      while (traceIds.size > TRACE_IDS_KEPT)
        traceIds.delete(traceIds.keys().next().value as string);
      return run(turnSpan(trace.setSpan(parentContext, span), traceparentOf(span)))
        .catch((error: unknown) => failed(span, error))
        .finally(() => span.end());
    },
    humanWait(wait: HumanWait) {
      const asked = contextOf(wait.parent);
      const question = trace.getSpanContext(asked);
      const span = otel.startSpan(
        'await_human',
        {
          startTime: wait.startedAt,
          attributes: {
            // The wait is the rest of the question's tool call, for GenAI trace viewers.
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': wait.toolName,
            'gen_ai.conversation.id': wait.conversationId,
            'gen_ai.tool.call.id': wait.toolCallId,
            'runner.question.kind': wait.kind,
            'runner.question.priority': wait.priority,
            'runner.question.audience_size': wait.audienceSize,
            'runner.question.outcome': wait.outcome,
          },
          // The answer, recorded here, links to the turn that asked (another process's span).
          ...(question
            ? { links: [{ context: question, attributes: { 'runner.link': 'question' } }] }
            : {}),
        },
        asked,
      );
      span.end();
    },
    traceId: ({ runId, conversationId }) =>
      (runId && traceIds.get(`run:${runId}`)) ||
      (conversationId ? traceIds.get(`conversation:${conversationId}`) : undefined),
  };
  /** The spans of one turn's model and tool calls, children of `turn` (a context with its span). */
  function turnSpan(turn: Context, traceparent: string): TurnSpan {
    return {
      traceparent,
      chat(model, call) {
        const { 'gen_ai.request.model': name } = modelAttributes(model);
        const span = otel.startSpan(
          `chat ${name}`,
          {
            kind: SpanKind.CLIENT,
            attributes: { 'gen_ai.operation.name': 'chat', ...modelAttributes(model) },
          },
          turn,
        );
        return call((usage) => setUsage(span, usage))
          .catch((error: unknown) => failed(span, error))
          .finally(() => span.end());
      },
      tool(name, toolCallId, run) {
        const span = otel.startSpan(
          `execute_tool ${name}`,
          {
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': name,
              'gen_ai.tool.call.id': toolCallId,
            },
          },
          turn,
        );
        try {
          return run();
        } catch (error) {
          return failed(span, error);
        } finally {
          span.end();
        }
      },
    };
  }
  return { tracer, shutdown: () => provider.shutdown() };
}
