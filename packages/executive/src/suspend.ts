import { randomUUID } from 'node:crypto';
import { createSuspension } from '@x/continuation';
import type { Message } from '@x/wire';
import { questionEvent } from './events.js';
import type { FlowContext } from './flow.js';
import type { Model } from './model-port.js';
import {
  argumentsDigest,
  type DecisionView,
  decisionView,
  recordDecision,
} from './policy-decisions.js';
import { askedUnder } from './policy-gate.js';
import {
  NO_QUESTION_POLICY,
  type QuestionDeadline,
  type QuestionPolicy,
  type QuestionTimes,
  questionAnswerers,
  questionTimes,
} from './question-policy.js';
import type { ExecutiveDatabase as Db } from './storage.js';
import type { TurnOutcome } from './turn.js';

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
      /** When the question stops waiting, and its default (the question policy's deadline). */
      deadline?: QuestionDeadline;
      /** When a worker next takes the run without an answer: its deadline, reminder or escalation. */
      dueAt?: Date;
      /** A gated tool's call waits for approval: the tool. */
      gated?: string;
    }
  | { status: 'cancelled'; runId: string; conversationId: string }
  | Reminded;

/**
 * A run taken at its question's due time before any answer or deadline: what was applied
 * (its reminder, its escalation's names and roles), and it waits again until `nextAt`.
 */
export interface Reminded {
  status: 'reminded';
  runId: string;
  conversationId: string;
  token: string;
  reminded: boolean;
  escalated: { names: string[]; roles: string[] } | null;
  nextAt: Date | null;
}

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
  /** A gated tool's call waiting for approval: the tool and the arguments the model gave. */
  gated?: { tool: string; arguments: Record<string, unknown> };
  /** The asking kind cannot run the call with other arguments: it may be approved or declined only. */
  fixedArguments?: true;
  /** Why the question was asked, when a policy decided it: the rules, their reason, the set's hash. */
  policy?: DecisionView;
  /** The W3C trace context of the turn that asked (traces on): its wait's span joins that trace. */
  traceparent?: string;
}

/** A run as a question of it is stored: its ids, and the person it acts for, if named. */
export interface RunIds {
  runId: string;
  conversationId: string;
  /** The requester (`exec --requester`), kept in the run's meta for the questions it asks. */
  requester?: string;
  /** The asking turn's trace context, kept with its pause (traces on). */
  traceparent?: string | undefined;
}

/** The requester a run's meta names, if any. */
export function requesterOf(meta: unknown): string | undefined {
  const requester = (meta as { requester?: unknown } | null)?.requester;
  return typeof requester === 'string' ? requester : undefined;
}

/** A run suspended on its delegate call: the parent turn stopped on it. */
export type DelegatedTurn = Extract<TurnOutcome, { status: 'delegated' }>;

/** What `question.created` adds to a question's fields: its deadline and default, if any. */
function createdExtra(deadline: QuestionDeadline | null | undefined) {
  return deadline ? { deadline: { at: deadline.at.toISOString(), answer: deadline.answer } } : {};
}

/**
 * Saves a suspended turn for later: the pause row (token = interaction id, with who may
 * answer it and its `deadline`, reminder, escalation and quorum under `policy`: `questionTimes`
 * of `@x/executive`) and the continuation
 * WITH the full messages. The run's own write takes the same deadline (`deadlineAt`) and
 * due time (`dueAt`), so that a worker claims it then. Call it inside `storage.transaction`, together with
 * the run's own write (created waiting, or finished as waiting on this token), so that all
 * are written or none; a new run's write needs nothing of it: {@link suspendNewRun}.
 */
export async function suspend(
  tx: Db,
  { storage, events }: FlowContext,
  { requester, traceparent, ...run }: RunIds,
  model: Pick<Model, 'id'>,
  outcome: SuspendedTurn,
  token: string = randomUUID(),
  given: QuestionPolicy = NO_QUESTION_POLICY,
  times: QuestionTimes = questionTimes(outcome.question, askedUnder(outcome.decision, given)),
): Promise<Extract<RunResult, { status: 'waiting' }>> {
  const { deadline, remind, escalate, quorum, dueAt } = times;
  const { decision } = outcome;
  const policy = askedUnder(decision, given);
  const suspension = createSuspension({
    interactionId: token,
    sessionId: run.conversationId,
    runId: run.runId,
    toolUseId: outcome.toolUse.id,
    assistant: outcome.assistant,
    messages: [...outcome.messages, outcome.assistant],
  });
  const { kind, question, options, priority } = outcome.question;
  const { gated, fixedArguments } = outcome.question;
  const resumeContext: ResumeContext = {
    model: model.id,
    run: run.runId,
    ...(gated ? { gated } : {}),
    ...(fixedArguments ? { fixedArguments } : {}),
    // Why it was asked, when a rule asked it or deciding failed; its record keeps every decision.
    ...(decision && (decision.ruleIds.length > 0 || decision.error)
      ? { policy: decisionView(decision) }
      : {}),
    ...(traceparent ? { traceparent } : {}),
  };
  const pause = {
    token,
    conversationId: run.conversationId,
    kind,
    question,
    options,
    priority,
    toolCallId: outcome.toolUse.id,
    resumeContext,
    ...questionAnswerers(outcome.question, requester, policy),
    deadline: deadline ?? null,
    remind: remind ?? null,
    escalate: escalate ?? null,
    quorum: quorum ?? null,
  };
  // Independent writes, sent together (one round trip on PostgreSQL); the first failure
  // fails the transaction.
  await Promise.all([
    // For the audit log: which run asked, and what the tool call's arguments were.
    storage.pauses(tx).insert(pause, {
      runId: run.runId,
      argumentsDigest: argumentsDigest(outcome.toolUse.input),
      // A gated call's arguments themselves, so that the log keeps both them and an edit.
      ...(gated ? { arguments: gated.arguments } : {}),
    }),
    events.record(tx, questionEvent('question.created', pause, createdExtra(deadline))),
    storage.continuations(tx).save(suspension),
    decision &&
      recordDecision(tx, storage, {
        ...decisionView(decision),
        id: randomUUID(),
        ...run,
        tool: outcome.toolUse.name,
        toolCallId: outcome.toolUse.id,
        position: outcome.messages.length,
        argumentsDigest: argumentsDigest(outcome.toolUse.input),
        // As the tool's schema typed them, when it is a gated tool.
        arguments: gated ? gated.arguments : outcome.toolUse.input,
        requester: requester ?? null,
        token,
        shadow: outcome.shadow ?? null,
      }),
  ]);
  return {
    status: 'waiting',
    ...run,
    token,
    question,
    options,
    ...(deadline ? { deadline } : {}),
    ...(dueAt ? { dueAt } : {}),
    ...(gated ? { gated: gated.tool } : {}),
  };
}

/**
 * A new run that stopped on its first question: its pause, continuation and run (waiting,
 * with the question's deadline and due time under `policy`) written in one transaction, all
 * sent together, and COMMIT with them unless a statement has to wait for another's reply.
 */
export async function suspendNewRun(
  flow: FlowContext,
  { requester, ...run }: RunIds,
  model: Pick<Model, 'id'>,
  outcome: SuspendedTurn,
  meta: Record<string, unknown>,
  token: string = randomUUID(),
  policy: QuestionPolicy = NO_QUESTION_POLICY,
): Promise<Extract<RunResult, { status: 'waiting' }>> {
  const times = questionTimes(outcome.question, askedUnder(outcome.decision, policy));
  const ids = { ...run, ...(requester === undefined ? {} : { requester }) };
  // With nothing to wait for between statements (no audit entry to sign after its head is
  // read, no notification to enqueue), every statement is sent at once and COMMIT with them.
  const { storage, events } = flow;
  const oneFlight = storage.auditKey() === undefined && !events.wants('question.created');
  return storage.transaction(async (tx, commitWith) => {
    // The run first: postgres.js sends a large statement (the continuation) at once and
    // holds small ones until the next turn of the event loop.
    const created = storage.runs(tx).create({
      runId: run.runId,
      conversationId: run.conversationId,
      status: 'waiting',
      interactionId: token,
      meta,
      ...(times.deadline ? { deadlineAt: times.deadline.at } : {}),
      ...(times.dueAt ? { dueAt: times.dueAt } : {}),
    });
    const written = Promise.all([
      created,
      suspend(tx, flow, ids, model, outcome, token, policy, times),
    ]);
    const [, waiting] = await (oneFlight ? commitWith(written) : written);
    return waiting;
  });
}
