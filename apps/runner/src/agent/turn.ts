import type {
  AssistantMessage,
  Message,
  StreamEvent,
  ToolResultBlock,
  ToolUseBlock,
} from '@x/wire';
import { toolResult, toolUses, userMessage } from '@x/wire';
import type { DelegateHandler, Delegation } from './delegate-port.js';
import { gatedToolSpecs, isGatedTool } from './gated-tools.js';
import type { Model, ModelRetry } from './model-port.js';
import {
  askAloneResult,
  DELEGATE_TOOL,
  delegateSpec,
  isHumanTool,
  type Question,
  questionOf,
  runTool,
  toolSpecs,
} from './tools.js';

/** The system prompt every model gets. */
export const SYSTEM_PROMPT = `You are a careful assistant. When you need something from the person, call ask_user; before an action with cost or side effects, call approve. Call either of them alone in a message, never next to other tool calls.`;

/** The system prompt of a worker sub-agent (the scripted model plays a worker's steps on it). */
export const WORKER_SYSTEM_PROMPT = `You are a worker sub-agent: do the one sub-task you are given and end with a short report. When you need something from the person, call ask_user alone.`;

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
  options: {
    signal?: AbortSignal;
    /** Offers the `delegate` tool and runs its calls (the parent agent). */
    delegate?: DelegateHandler;
    /** A worker sub-agent's turn: its own prompt, no `delegate`. */
    worker?: boolean;
    /** Offers the gated tools (`send_email`, ...): a call of one waits for approval (unattended runs). */
    gated?: boolean;
    /** Runs each tool call (a tracer's span around it); default: just runs it. */
    toolRun?: <T>(use: ToolUseBlock, run: () => T) => T;
  } = {},
): Promise<TurnOutcome> {
  let messages = [...transcript];
  const waits = (name: string) =>
    isHumanTool(name) || (options.gated === true && isGatedTool(name));
  const traced = <T>(use: ToolUseBlock, run: () => T): T =>
    options.toolRun ? options.toolRun(use, run) : run();
  const tools = [
    ...toolSpecs,
    ...(options.gated ? gatedToolSpecs : []),
    ...(options.delegate ? [delegateSpec] : []),
  ];
  for (let step = 0; step < MAX_STEPS; step++) {
    options.signal?.throwIfAborted();
    observer.modelCall?.();
    const assistant = await model.generate({
      system: options.worker ? WORKER_SYSTEM_PROMPT : SYSTEM_PROMPT,
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
      const question = traced(only, () => questionOf(only));
      if (!('error' in question)) {
        observer.event({
          type: 'interrupt-raised',
          toolCallId: only.id,
          kind: question.kind,
          payload: { question: question.question, options: question.options },
        });
        return { status: 'suspended', messages, assistant, toolUse: only, question };
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
          runTool(use, {
            progress: (message) =>
              observer.event({ type: 'tool-progress', toolCallId: use.id, message }),
            planUpdated: (todos) => observer.event({ type: 'plan-updated', todos }),
          });
        return traced(use, run);
      }
      if (uses.length > 1) return askAloneResult(use);
      const question = questionOf(use);
      return toolResult(use.id, `invalid input: ${'error' in question ? question.error : ''}`, {
        isError: true,
      });
    });
    messages = [...messages, assistant, userMessage(...results)];
  }
  throw new Error(`the turn made ${MAX_STEPS} model calls without finishing; stopped`);
}
