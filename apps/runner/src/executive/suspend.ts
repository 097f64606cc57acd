import { createHash, randomUUID } from 'node:crypto';
import type { ResumeAnswer } from '@x/askuser';
import { createSuspension } from '@x/continuation';
import type { Message } from '@x/wire';
import type { Model } from '../agent/model-port.js';
import type { TurnOutcome } from '../agent/turn.js';
import { setting, VARIABLES } from '../config/index.js';
import { questionEvent, recordEvent } from '../notify/events.js';
import type { Db, Storage } from '../storage/index.js';
import { questionPolicy } from './question-policy.js';

/** A worker's question that a delegated run waits on. */
export interface WorkerQuestionInfo {
  token: string;
  worker: string;
  task: string;
  question: string;
  options: string[] | null;
}

/** How an unattended run stands once a turn of it stopped. */
export type RunResult =
  | { status: 'completed'; runId: string; conversationId: string; messages: Message[] }
  | {
      status: 'waiting';
      runId: string;
      conversationId: string;
      token: string;
      question: string;
      options: string[] | null;
      /** A delegated run: every worker question it waits on (`token` is the first's). */
      questions?: WorkerQuestionInfo[];
      /** When the question stops waiting, and its default (RUNNER_DEADLINE). */
      deadline?: QuestionDeadline;
    }
  | { status: 'cancelled'; runId: string; conversationId: string };

/** What an unattended run needs to pick the model of a conversation. */
export type ModelFor = (modelId: string) => Model;

/** A turn that stopped on a human tool call. */
export type SuspendedTurn = Extract<TurnOutcome, { status: 'suspended' }>;

/** What a pause row of the executive keeps to resume its run. */
export interface ResumeContext {
  /** The model the run was started with. */
  model: string;
  run: string;
  /** A worker's question: the parent continuation whose run its answer makes ready. */
  parent?: string;
  /** A worker's question: the delegate call, the worker and its sub-task. */
  delegate?: { toolCallId: string; worker: string; task: string };
}

/** A run as a question of it is stored: its ids, and the person it acts for, if named. */
export interface RunIds {
  runId: string;
  conversationId: string;
  /** The requester (`exec --requester`), kept in the run's meta for the questions it asks. */
  requester?: string;
}

/** The requester a run's meta names, if any. */
export function requesterOf(meta: unknown): string | undefined {
  const requester = (meta as { requester?: unknown } | null)?.requester;
  return typeof requester === 'string' ? requester : undefined;
}

/** When a question stops waiting, and the default applied then (the outcome expired). */
export interface QuestionDeadline {
  at: Date;
  answer: ResumeAnswer;
}

/** The deadline of a new question of the human tool `kind`, from RUNNER_DEADLINE (none: it waits). */
export function deadlineFor(kind: string, now = Date.now()): QuestionDeadline | undefined {
  const rule = setting(VARIABLES.RUNNER_DEADLINE)?.[kind];
  return rule && { at: new Date(now + rule.ms), answer: rule.answer };
}

/** A run suspended on its delegate call: the parent turn stopped on it. */
export type DelegatedTurn = Extract<TurnOutcome, { status: 'delegated' }>;

/** What `question.created` adds to a question's fields: its deadline and default, if any. */
function createdExtra(deadline: QuestionDeadline | null | undefined) {
  return deadline ? { deadline: { at: deadline.at.toISOString(), answer: deadline.answer } } : {};
}

/** `sha256:` and the hex SHA-256 of a tool call's arguments as JSON. */
function argumentsDigest(input: unknown): string {
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(input ?? null))
    .digest('hex')}`;
}

/**
 * Saves a suspended turn for later: the pause row (token = interaction id, with its
 * `deadline`) and the continuation WITH the full messages. The run's own write takes the
 * same deadline (`deadlineAt`), so that a worker claims it then. Call it inside `storage.transaction`, together with
 * the run's own write (created waiting, or finished as waiting on this token), so that all
 * are written or none.
 */
export async function suspend(
  tx: Db,
  storage: Storage,
  { requester, ...run }: RunIds,
  model: Pick<Model, 'id'>,
  outcome: SuspendedTurn,
  token: string = randomUUID(),
  deadline: QuestionDeadline | undefined = deadlineFor(outcome.question.kind),
): Promise<Extract<RunResult, { status: 'waiting' }>> {
  const suspension = createSuspension({
    interactionId: token,
    sessionId: run.conversationId,
    runId: run.runId,
    toolUseId: outcome.toolUse.id,
    assistant: outcome.assistant,
    messages: [...outcome.messages, outcome.assistant],
  });
  const { kind, question, options, priority } = outcome.question;
  const resumeContext: ResumeContext = { model: model.id, run: run.runId };
  const pause = {
    token,
    conversationId: run.conversationId,
    kind,
    question,
    options,
    priority,
    toolCallId: outcome.toolUse.id,
    resumeContext,
    ...questionPolicy(outcome.question, requester),
    deadline: deadline ?? null,
  };
  // For the audit log: which run asked, and what the tool call's arguments were.
  const argsDigest = argumentsDigest(outcome.toolUse.input);
  await storage.pauses(tx).insert(pause, { runId: run.runId, argumentsDigest: argsDigest });
  await recordEvent(tx, storage, questionEvent('question.created', pause, createdExtra(deadline)));
  await storage.continuations(tx).save(suspension);
  return {
    status: 'waiting',
    ...run,
    token,
    question,
    options,
    ...(deadline ? { deadline } : {}),
  };
}
