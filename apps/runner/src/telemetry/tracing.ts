import {
  type Context,
  context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { ExecutiveTracer, HumanWait } from '../executive/telemetry.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The W3C `traceparent` of a span: how a trace context is stored with a run and a pause. */
function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

/** The context of a stored `traceparent` (another process's span), or the active one. */
function contextOf(traceparent: string | undefined): Context {
  const match = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!match) return context.active();
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
  provider.register();
  const otel = trace.getTracer('runner');
  const tracer: ExecutiveTracer = {
    turn(about, parent, run) {
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
        contextOf(parent),
      );
      return context.with(trace.setSpan(contextOf(parent), span), () =>
        run(traceparentOf(span))
          .catch((error: unknown) => failed(span, error))
          .finally(() => span.end()),
      );
    },
    chat(model, call) {
      const { 'gen_ai.request.model': name } = modelAttributes(model);
      return otel.startActiveSpan(
        `chat ${name}`,
        {
          kind: SpanKind.CLIENT,
          attributes: { 'gen_ai.operation.name': 'chat', ...modelAttributes(model) },
        },
        (span) =>
          call()
            .catch((error: unknown) => failed(span, error))
            .finally(() => span.end()),
      );
    },
    tool(name, toolCallId, run) {
      return otel.startActiveSpan(
        `execute_tool ${name}`,
        {
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': name,
            'gen_ai.tool.call.id': toolCallId,
          },
        },
        (span) => {
          try {
            return run();
          } catch (error) {
            return failed(span, error);
          } finally {
            span.end();
          }
        },
      );
    },
    humanWait(wait: HumanWait) {
      const asked = contextOf(wait.parent);
      const question = trace.getSpanContext(asked);
      const span = otel.startSpan(
        'await_human',
        {
          startTime: wait.startedAt,
          attributes: {
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
    traceId: () => trace.getActiveSpan()?.spanContext().traceId,
  };
  return { tracer, shutdown: () => provider.shutdown() };
}
