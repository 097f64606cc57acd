import type {
  AssistantMessage,
  Message,
  StreamEvent,
  ToolResultBlock,
  ToolUseBlock,
} from '@x/wire';
import { toolResult, toolUses, userMessage } from '@x/wire';
import type { DelegateHandler, Delegation } from './delegate-port.js';
import { type GatedTools, isGatedTool } from './gated-tools.js';
import type { Model, ModelRetry } from './model-port.js';
import type { ShadowOutcome } from './policy-decisions.js';
import type { AskDecision, PolicyGate } from './policy-gate.js';
import {
  askAloneResult,
  DELEGATE_TOOL,
  delegateSpec,
  humanToolSpecs,
  isHumanTool,
  type OrdinaryTools,
  type Question,
  questionOf,
  runTool,
  toolSpecsOf,
} from './tools.js';

/** Where a turn stopped. */
export type TurnOutcome =
  | {
      status: 'completed';
      /** The whole transcript, ending with the model's final answer. */
      messages: Message[];
    }
  | {
      status: 'suspended';
      /** The transcript before the assistant message that asked. */
      messages: Message[];
      /** The assistant message whose only tool call waits for a person. */
      assistant: AssistantMessage;
      toolUse: ToolUseBlock;
      question: Question;
      /** The policy's decision to ask, when a gate decided the call: the question's settings and why. */
      decision?: AskDecision;
      /** The candidate (shadow) set's outcome of the same call, recorded beside the decision. */
      shadow?: ShadowOutcome;
    }
  | {
      /** Suspended on its `delegate` call: some workers wait on a person. */
      status: 'delegated';
      /** The transcript before the assistant message that delegated. */
      messages: Message[];
      /** The assistant message whose only tool call is the `delegate` call. */
      assistant: AssistantMessage;
      toolUse: ToolUseBlock;
      delegation: Delegation;
    };

/** What a running turn reports. */
export interface TurnObserver {
  event(event: StreamEvent): void;
  /** Called before each model call (tests count them). */
  modelCall?(): void;
  /** A model call's attempt failed and is retried: the text it streamed is void. */
  modelRetry?(retry: ModelRetry): void;
}

/** A turn that goes on calling tools without end is stopped here. */
const MAX_STEPS = 25;

/** What a turn runs with: its prompt and its tools, and how it reports and stops. */
export interface TurnOptions {
  /** The system prompt of every model call. */
  system: string;
  /** The tools that run as soon as they are called (the human tools are always offered). */
  tools: OrdinaryTools;
  /** Tools that run only once approved: a call of one waits for a person (unattended runs). */
  gated?: GatedTools;
  signal?: AbortSignal;
  /** Offers the `delegate` tool and runs its calls (the parent agent). */
  delegate?: DelegateHandler;
  /**
   * Decides each call that would wait (a gated or human tool called alone, its arguments valid)
   * before it waits: allowed or denied, the turn goes on with the gate's result; default: every
   * such call asks. A call with invalid arguments gets why as its result, undecided.
   */
  gate?: PolicyGate;
  /** Runs each tool call (a tracer's span around it); default: just runs it. */
  toolRun?: <T>(use: ToolUseBlock, run: () => T) => T;
}

/**
 * Runs the agent loop from a transcript that ends with a user message, until the model
 * answers without tools (completed) or calls a human tool alone (suspended).
 *
 * A human tool next to sibling calls does not suspend: the siblings run, the human tool
 * gets an error result telling the model to ask alone, and the loop goes on. So the
 * singleton rule of @x/continuation always holds and nothing is dropped or re-run.
 */
export async function runTurn(
  model: Model,
  transcript: readonly Message[],
  observer: TurnObserver,
  options: TurnOptions,
): Promise<TurnOutcome> {
  let messages = [...transcript];
  const gated = options.gated ?? {};
  const waits = (name: string) => isHumanTool(name) || isGatedTool(gated, name);
  const traced = <T>(use: ToolUseBlock, run: () => T): T =>
    options.toolRun ? options.toolRun(use, run) : run();
  const tools = [
    ...humanToolSpecs,
    ...toolSpecsOf(options.tools),
    ...toolSpecsOf(gated),
    ...(options.delegate ? [delegateSpec] : []),
  ];
  for (let step = 0; step < MAX_STEPS; step++) {
    options.signal?.throwIfAborted();
    observer.modelCall?.();
    const assistant = await model.generate({
      system: options.system,
      messages,
      tools,
      onText: (text) => observer.event({ type: 'text-delta', text }),
      onRetry: (retry) => observer.modelRetry?.(retry),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const uses = toolUses(assistant);
    if (uses.length === 0) return { status: 'completed', messages: [...messages, assistant] };

    const only = uses.length === 1 ? uses[0] : undefined;
    if (only && waits(only.name)) {
      // Asking is the call's execution in the turn (traced like any tool); the wait follows.
      const question = traced(only, () => questionOf(only, Date.now(), gated));
      const verdict =
        options.gate && !('error' in question)
          ? await options.gate(only, messages.length)
          : undefined;
      if (verdict && 'result' in verdict) {
        messages = [...messages, assistant, userMessage(verdict.result)];
        continue;
      }
      if (!('error' in question)) {
        observer.event({
          type: 'interrupt-raised',
          toolCallId: only.id,
          kind: question.kind,
          payload: { question: question.question, options: question.options },
        });
        const decision = verdict?.ask;
        const shadow = verdict && 'ask' in verdict ? verdict.shadow : undefined;
        return {
          status: 'suspended',
          messages,
          assistant,
          toolUse: only,
          question,
          ...(decision ? { decision } : {}),
          ...(shadow ? { shadow } : {}),
        };
      }
    }
    if (only && only.name === DELEGATE_TOOL && options.delegate) {
      const done = await options.delegate(only, options.signal);
      if ('waiting' in done) {
        return {
          status: 'delegated',
          messages,
          assistant,
          toolUse: only,
          delegation: done.waiting,
        };
      }
      messages = [...messages, assistant, userMessage(done.result)];
      continue;
    }
    const results: ToolResultBlock[] = uses.map((use) => {
      if (use.name === DELEGATE_TOOL && options.delegate) return askAloneResult(use);
      if (!waits(use.name)) {
        const run = () =>
          runTool(options.tools, use, {
            progress: (message) =>
              observer.event({ type: 'tool-progress', toolCallId: use.id, message }),
            planUpdated: (todos) => observer.event({ type: 'plan-updated', todos }),
          });
        return traced(use, run);
      }
      if (uses.length > 1) return askAloneResult(use);
      const question = questionOf(use, Date.now(), gated);
      return toolResult(use.id, `invalid input: ${'error' in question ? question.error : ''}`, {
        isError: true,
      });
    });
    messages = [...messages, assistant, userMessage(...results)];
  }
  throw new Error(`the turn made ${MAX_STEPS} model calls without finishing; stopped`);
}
