import { randomUUID } from 'node:crypto';
import {
  createRuntime,
  type EventSink,
  type Interrupt,
  type Runtime,
  SessionManager,
} from '@x/session';
import type { JsonValue, Message, StreamEvent, ToolResultBlock, ToolUseBlock } from '@x/wire';
import { textOf, toolResult, userMessage } from '@x/wire';
import { z } from 'zod';
import type { DelegateHandler, Delegation, Worker, WorkerQuestion } from './delegate-port.js';
import type { Model } from './model-port.js';
import {
  answerResult,
  DelegateInputSchema,
  type HumanAnswer,
  type OrdinaryTools,
} from './tools.js';
import { runTurn, type TurnObserver } from './turn.js';

/** The default system prompt of a worker sub-agent. */
export const WORKER_SYSTEM_PROMPT = `You are a worker sub-agent: do the one sub-task you are given and end with a short report. When you need something from the person, call ask_user alone.`;

/** How a delegate call's worker sub-agents run. */
export interface WorkerOptions {
  /** The workers' system prompt; default {@link WORKER_SYSTEM_PROMPT}. */
  system?: string;
  /** The ordinary tools a worker is offered (the human tools always are); default none. */
  tools?: OrdinaryTools;
  /** How many workers of one call run at once; default 2. */
  workerConcurrency?: number;
}

// The session's Runtime reports to a sink; the runner's observer is that sink here.
function sinkOf(observer: TurnObserver): EventSink {
  return {
    emit: (event: StreamEvent) => observer.event(event),
    close: () => {},
    closed: false,
  };
}

/** The parent interrupt that relays `worker`'s question: one per worker, on the delegate call. */
export function relayId(delegation: Delegation, workerId: string): string {
  return `${delegation.toolCallId}/${workerId}`;
}

function parentRuntime(delegation: Delegation, observer: TurnObserver, workerId: string): Runtime {
  return createRuntime({ session: delegation.parent, events: sinkOf(observer) }).withToolCall(
    relayId(delegation, workerId),
  );
}

function workerRuntime(worker: Worker, observer: TurnObserver, toolCallId: string): Runtime {
  return createRuntime({ session: worker.session, events: sinkOf(observer) }).withToolCall(
    toolCallId,
  );
}

/** A new delegation with one fresh worker per task. */
export function newDelegation(use: ToolUseBlock, tasks: readonly string[]): Delegation {
  return {
    toolCallId: use.id,
    parent: new SessionManager(),
    interruptToRequester: {},
    workers: tasks.map((task, i) => ({
      id: `w${i + 1}`,
      task,
      session: new SessionManager(),
      window: [userMessage(task)],
    })),
  };
}

/** The open question of a worker (its parent interrupt's payload), if it waits on one. */
export function openQuestion(delegation: Delegation, workerId: string): WorkerQuestion | undefined {
  const open = delegation.parent.pendingInterrupt(relayId(delegation, workerId));
  return open ? (open.payload as unknown as WorkerQuestion) : undefined;
}

/** Every worker that waits on a person, with its question. */
export function waitingWorkers(
  delegation: Delegation,
): Array<{ worker: Worker; question: WorkerQuestion }> {
  return delegation.workers.flatMap((worker) => {
    const question = openQuestion(delegation, worker.id);
    return question ? [{ worker, question }] : [];
  });
}

function lastText(messages: readonly Message[]): string {
  const last = messages[messages.length - 1];
  return last?.role === 'assistant' ? textOf(last).trim() : '';
}

/**
 * Runs one worker's turn from its window: it finishes with a report, or asks. A question is
 * raised as an interrupt through the worker's turn Runtime, and the parent's delegate call
 * adopts it (routing recorded in `interruptToRequester`). Returns the progress line to
 * print once the step is stored.
 */
async function stepWorker(
  delegation: Delegation,
  worker: Worker,
  model: Model,
  observer: TurnObserver,
  setup: WorkerOptions & { signal?: AbortSignal | undefined },
): Promise<string> {
  const quiet: TurnObserver = { event: () => {}, modelCall: () => observer.modelCall?.() };
  const turn = await runTurn(model, worker.window, quiet, {
    system: setup.system ?? WORKER_SYSTEM_PROMPT,
    tools: setup.tools ?? {},
    ...(setup.signal ? { signal: setup.signal } : {}),
  });
  if (turn.status === 'completed') {
    worker.window = turn.messages;
    worker.report = lastText(turn.messages) || '(no report)';
    return `${worker.id} finished: ${worker.report}`;
  }
  if (turn.status !== 'suspended') throw new Error('a worker cannot delegate');
  const { kind, question, options, priority, audience } = turn.question;
  const payload: WorkerQuestion = {
    kind,
    question,
    options,
    priority,
    ...(audience ? { audience } : {}),
    token: randomUUID(),
    toolCallId: turn.toolUse.id,
  };
  worker.window = [...turn.messages, turn.assistant];
  const raised = workerRuntime(worker, quiet, turn.toolUse.id).raiseInterrupt(
    kind,
    payload as unknown as JsonValue,
  );
  parentRuntime(delegation, observer, worker.id).adoptInterrupt(raised);
  delegation.interruptToRequester[relayId(delegation, worker.id)] = worker.id;
  return `${worker.id} asks: ${question}`;
}

function progress(observer: TurnObserver, delegation: Delegation, message: string): void {
  observer.event({ type: 'tool-progress', toolCallId: delegation.toolCallId, message });
}

/**
 * Runs the given workers, at most `workerConcurrency` at once; `settled` is called
 * after each (one at a time), e.g. to make its step durable before the next one is recorded.
 * A worker's "finished" or "asks" line is printed after its `settled` resolved: what the
 * operator is told has been stored.
 */
export async function runWorkers(
  delegation: Delegation,
  workerIds: readonly string[],
  model: Model,
  observer: TurnObserver,
  options: WorkerOptions & {
    signal?: AbortSignal;
    settled?: (worker: Worker) => Promise<void>;
  } = {},
): Promise<void> {
  const queue = delegation.workers.filter((w) => workerIds.includes(w.id) && !w.report);
  let recording = Promise.resolve();
  let failure: { error: unknown } | undefined;
  // A failed worker stops the others from starting, and every lane is waited for, so that
  // nothing of this attempt is still running (or recording) once it is reported failed.
  const lane = async () => {
    for (let worker = queue.shift(); worker && !failure; worker = queue.shift()) {
      try {
        const line = await stepWorker(delegation, worker, model, observer, options);
        const done = worker;
        recording = recording.then(() => options.settled?.(done));
        await recording;
        progress(observer, delegation, line);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: options.workerConcurrency ?? 2 }, lane));
  if (failure) throw failure.error;
}

/**
 * Routes a person's answer to the worker that asked: the parent's relay interrupt is
 * resolved and taken, `interruptToRequester` names the worker, and the worker's own
 * interrupt is resolved and taken into its window as the tool result.
 */
export function answerWorker(
  delegation: Delegation,
  workerId: string,
  answer: HumanAnswer,
  observer: TurnObserver,
): void {
  const id = relayId(delegation, workerId);
  const parent = parentRuntime(delegation, observer, workerId);
  parent.returnInterrupt(id, answer as unknown as JsonValue);
  const relayed = parent.takeResolvedInterrupt(id) as Interrupt;
  const requester = delegation.interruptToRequester[id];
  delete delegation.interruptToRequester[id];
  const worker = delegation.workers.find((w) => w.id === requester);
  const childId = relayed.requesters?.[0];
  if (!worker || !childId) throw new Error(`no worker asked through interrupt "${id}"`);
  const own = workerRuntime(worker, observer, childId);
  own.returnInterrupt(childId, answer as unknown as JsonValue);
  const taken = own.takeResolvedInterrupt(childId) as Interrupt;
  worker.window = [
    ...worker.window,
    userMessage(answerResult(childId, taken.result as unknown as HumanAnswer)),
  ];
}

/** The delegate call's result once every worker finished: each worker's report, once. */
export function delegateResult(delegation: Delegation): ToolResultBlock {
  const lines = delegation.workers.map((w) => `${w.id} (${w.task}): ${w.report ?? ''}`);
  return toolResult(delegation.toolCallId, lines.join('\n'));
}

/**
 * Workers to run: neither finished nor waiting on a person. That is a worker whose answer
 * was just routed to it, or one whose answer was recorded before a crash cut its run short
 * (another worker's step was made durable meanwhile): it goes on from that answer.
 */
export function unsettledWorkers(delegation: Delegation): string[] {
  return delegation.workers
    .filter((w) => w.report === undefined && !openQuestion(delegation, w.id))
    .map((w) => w.id);
}

/** True once every worker has its report. */
export function allFinished(delegation: Delegation): boolean {
  return delegation.workers.every((w) => w.report !== undefined);
}

/**
 * The unattended `delegate` handler: runs a fresh worker per task; the call's result when
 * all finished, else the delegation whose workers wait on a person.
 */
export function runDelegate(
  model: Model,
  observer: TurnObserver,
  workers: WorkerOptions = {},
): DelegateHandler {
  return async (use, signal) => {
    const input = DelegateInputSchema.safeParse(use.input);
    if (!input.success) {
      return {
        result: toolResult(use.id, `invalid input: ${z.prettifyError(input.error)}`, {
          isError: true,
        }),
      };
    }
    const delegation = newDelegation(use, input.data.tasks);
    const ids = delegation.workers.map((w) => w.id);
    await runWorkers(delegation, ids, model, observer, signal ? { ...workers, signal } : workers);
    return allFinished(delegation)
      ? { result: delegateResult(delegation) }
      : { waiting: delegation };
  };
}
