import { randomUUID } from 'node:crypto';
import { type ResumeAnswer, resumeAnswerSchema } from '@x/askuser';
import { createSuspension, type Suspension } from '@x/continuation';
import type { Message, ToolUseBlock } from '@x/wire';
import type { Delegation } from './delegate-port.js';
import { waitingWorkers } from './delegation.js';
import { getDelegation, putDelegation } from './delegation-checkpoint.js';
import { questionEvent } from './events.js';
import type { FlowContext } from './flow.js';
import type { Model } from './model-port.js';
import { NO_QUESTION_POLICY, type QuestionPolicy, questionAnswerers } from './question-policy.js';
import type { ExecutiveDatabase as Db, ExecutiveStorage as Storage } from './storage.js';
import type { DelegatedTurn, ResumeContext, RunIds, RunResult } from './suspend.js';
import { DELEGATE_TOOL } from './tools.js';

/** A delegation of an unattended run, with what it needs to be written again. */
export interface StoredDelegation {
  /** The parent's continuation (the run waits on it), also the parent's checkpoint thread. */
  interactionId: string;
  run: RunIds;
  /** Who may answer the workers' questions it stores. */
  policy: QuestionPolicy;
  modelId: string;
  delegation: Delegation;
  /** The parent's transcript, ending with the assistant message that delegated. */
  window: Message[];
  toolUse: ToolUseBlock;
  /** The checkpoint revision of each thread, as last read or written. */
  revisions: Map<string, number>;
  /** Tokens of questions already stored as pauses. */
  asked: Set<string>;
}

/** True when a run's continuation is suspended on a `delegate` call. */
export function isDelegation(suspension: Suspension): boolean {
  return suspension.assistant.content.some(
    (block) =>
      block.type === 'tool_use' &&
      block.id === suspension.toolUseId &&
      block.name === DELEGATE_TOOL,
  );
}

/**
 * Writes the delegation inside `tx`: the parent's checkpoint (its relay interrupts and
 * their routing), each worker's checkpoint, and one pause per question not stored yet,
 * carrying the worker id and the worker's tool call. Revisions are checked: a writer that
 * read an older state writes nothing.
 */
export async function saveDelegation(
  tx: Db,
  { storage, events }: FlowContext,
  stored: StoredDelegation,
) {
  const { delegation, interactionId, run } = stored;
  const parent = { window: stored.window, use: stored.toolUse };
  await putDelegation(storage.sessions(tx), interactionId, delegation, parent, stored.revisions);
  for (const { worker, question } of waitingWorkers(delegation)) {
    if (stored.asked.has(question.token)) continue;
    const resumeContext: ResumeContext = {
      model: stored.modelId,
      run: run.runId,
      parent: interactionId,
      delegate: { toolCallId: delegation.toolCallId, worker: worker.id, task: worker.task },
      ...(run.traceparent ? { traceparent: run.traceparent } : {}),
    };
    const pause = {
      token: question.token,
      conversationId: run.conversationId,
      kind: question.kind,
      question: question.question,
      options: question.options,
      priority: question.priority,
      toolCallId: delegation.toolCallId,
      resumeContext,
      proxiedFromChildId: worker.id,
      proxiedToolCallId: question.toolCallId,
      ...questionAnswerers(question, run.requester, stored.policy),
    };
    await storage.pauses(tx).insert(pause, { runId: run.runId });
    const created = questionEvent('question.created', pause, { worker: worker.id });
    await events.record(tx, created);
    stored.asked.add(question.token);
  }
}

/** The delegation whose parent checkpoint is `interactionId`, with each thread's revision. */
export function readDelegation(storage: Storage, interactionId: string) {
  return getDelegation(storage.sessions(), interactionId);
}

/**
 * Reads the delegation a run waits on: the parent's checkpoint and each worker's; the
 * questions its workers ask next are stored under `policy`.
 */
export async function loadDelegation(
  storage: Storage,
  suspension: Suspension,
  run: RunIds,
  modelId: string,
  policy: QuestionPolicy,
): Promise<StoredDelegation> {
  const interactionId = suspension.interactionId;
  const read = await readDelegation(storage, interactionId);
  if (!read) throw new Error(`the delegation of ${interactionId} has no checkpoint`);
  const toolUse = suspension.assistant.content.find(
    (block): block is ToolUseBlock =>
      block.type === 'tool_use' && block.id === suspension.toolUseId,
  ) as ToolUseBlock;
  return {
    interactionId,
    run,
    policy,
    modelId,
    delegation: read.delegation,
    window: suspension.messages ?? [],
    toolUse,
    revisions: read.revisions,
    asked: new Set(waitingWorkers(read.delegation).map((w) => w.question.token)),
  };
}

/** The answers already given to waiting workers' questions, by worker id (read in `tx` if given). */
export async function answersOf(
  storage: Storage,
  stored: StoredDelegation,
  tx?: Db,
): Promise<Map<string, ResumeAnswer>> {
  const answers = new Map<string, ResumeAnswer>();
  for (const { worker, question } of waitingWorkers(stored.delegation)) {
    const answered = await storage.pauses(tx).getAnswer(question.token);
    if (answered) answers.set(worker.id, resumeAnswerSchema.parse(answered.answer));
  }
  return answers;
}

/** The waiting result of a delegated run: each worker question with its token. */
export function delegatedResult(
  stored: StoredDelegation,
): Extract<RunResult, { status: 'waiting' }> {
  const questions = waitingWorkers(stored.delegation).map(({ worker, question }) => ({
    token: question.token,
    worker: worker.id,
    task: worker.task,
    question: question.question,
    options: question.options,
  }));
  const first = questions[0];
  const { runId, conversationId } = stored.run;
  return {
    status: 'waiting',
    runId,
    conversationId,
    token: first?.token ?? '',
    question: first?.question ?? '',
    options: first?.options ?? null,
    questions,
  };
}

/**
 * Saves a turn suspended on its delegate call: the parent's continuation WITH the full
 * messages (the run waits on it), the parent's and workers' checkpoints and one pause per
 * worker question (who may answer it under `policy`). Call it inside `storage.transaction` with
 * the run's own write.
 */
export async function suspendDelegation(
  tx: Db,
  flow: FlowContext,
  run: RunIds,
  model: Pick<Model, 'id'>,
  outcome: DelegatedTurn,
  interactionId: string = randomUUID(),
  policy: QuestionPolicy = NO_QUESTION_POLICY,
): Promise<Extract<RunResult, { status: 'waiting' }>> {
  const window = [...outcome.messages, outcome.assistant];
  await flow.storage.continuations(tx).save(
    createSuspension({
      interactionId,
      sessionId: run.conversationId,
      runId: run.runId,
      toolUseId: outcome.toolUse.id,
      assistant: outcome.assistant,
      messages: window,
    }),
  );
  const stored: StoredDelegation = {
    interactionId,
    run,
    policy,
    modelId: model.id,
    delegation: outcome.delegation,
    window,
    toolUse: outcome.toolUse,
    revisions: new Map(),
    asked: new Set(),
  };
  await saveDelegation(tx, flow, stored);
  return delegatedResult(stored);
}
