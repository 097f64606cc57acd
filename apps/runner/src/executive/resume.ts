import {
  type AnsweredPause,
  AskUserError,
  type ResumeAnswer,
  resumeAnswerSchema,
} from '@x/askuser';
import { ContinuationError, resumeMessages, type Suspension } from '@x/continuation';
import type { AttemptCounts, ClaimedRun, RetryPolicy, RunJob } from '@x/continuation-postgres';
import {
  allFinished,
  answerResult,
  answersOf,
  answerWorker,
  applyDue,
  cancelRun,
  DELEGATE_TOOL,
  delegateResult,
  ExecutiveError,
  type ExecutiveTelemetry,
  expiredResult,
  finishTurn,
  gatedCallResult,
  isDelegation,
  isGatedTool,
  isHumanTool,
  type LeasePolicy,
  loadDelegation,
  type Model,
  type ModelFor,
  NO_QUESTION_POLICY,
  type QuestionPolicy,
  questionKindOf,
  type Reminded,
  type RunResult,
  recordGatedResult,
  requesterOf,
  runDelegate,
  runTurn,
  runWorkers,
  type StoredDelegation,
  saveSettled,
  type TurnObserver,
  type TurnOutcome,
  unsettledWorkers,
  waitAgain,
} from '@x/executive';
import { SessionError } from '@x/session';
import type { ToolResultBlock, ToolUseBlock } from '@x/wire';
import { demoGatedTools, demoTools, demoWorkers, SYSTEM_PROMPT } from '../demo/tools.js';
import { postgresCause, withoutOrigin } from '../errors.js';
import { failureOf } from '../failure.js';
import type { Storage } from '../storage/index.js';
import { flowOf } from './suspend.js';
import {
  type ObservedWait,
  observeResume,
  storedTraceparent,
  tracedTools,
  tracedTurn,
  traceWait,
  watchedModel,
  watching,
} from './telemetry.js';

/**
 * The run queue's retry policy of `lease`: an error that would fail again on every attempt
 * (a saved turn of a newer version, a write a store refused) is not retried.
 */
export function retryPolicyOf(lease: LeasePolicy): RetryPolicy {
  return {
    ...lease.retry,
    retryable: (error) => !writtenByNewerCode(error) && !refusedByStore(error),
  };
}

/** What became of one claimed run, as {@link resumeNext} reports it. */
export interface Resumed {
  runId: string;
  /** The question whose answer the run resumed from. */
  token: string;
  conversationId: string;
  /** The answer it resumes from; undefined when it was claimed at its wait's due time. */
  answer: ResumeAnswer | undefined;
  /** Claimed because its question's deadline passed unanswered: that deadline. */
  deadline?: Date;
  /** This attempt's number (1 for the first). */
  attempt: number;
  /** The run waited on its delegate call: `token` is the parent's continuation. */
  delegated?: boolean;
  outcome:
    | RunResult
    /** The attempt failed; the run is ready again after the backoff. */
    | {
        status: 'retrying';
        runId: string;
        conversationId: string;
        error: string;
        retryInMs: number;
      }
    /**
     * The attempt failed and no retry is left, or (`gaveUp`) the attempts before this claim
     * used up the limit: `runner retry` makes it ready again. `attempts` says how the
     * attempts ended.
     */
    | {
        status: 'failed';
        runId: string;
        conversationId: string;
        error: string;
        attempts: AttemptCounts;
        gaveUp?: boolean;
      }
    /** Another worker took the run over (this one stalled past its lease): nothing was written. */
    | { status: 'lease-lost'; runId: string; conversationId: string }
    /**
     * The worker stopped and its grace ran out mid-turn: the turn was cut, nothing of it was
     * written, and the lease was released, so any worker may claim the run at once.
     */
    | { status: 'released'; runId: string; conversationId: string };
}

/** Options of {@link resumeRun}. */
export interface ResumeOptions {
  modelFor: ModelFor;
  /** The observer of a claimed run's turn. */
  observerFor(run: { runId: string; token: string; conversationId: string }): TurnObserver;
  /** Hears of a claimed run once what it resumes from is known, before anything of its turn happens. */
  onClaimed?(run: Omit<Resumed, 'outcome'>): void;
  policy: LeasePolicy;
  /** The policy the questions of resumed turns are asked under; default none. */
  questionPolicy?: QuestionPolicy;
}

/** What a run claimed at its due time resumed from (its deadline's default or an answer in time). */
const resolvedAtDue = new WeakMap<ClaimedRun, AnsweredPause>();

/**
 * Which run a job is, for the reports: its question, the answer it resumes from (once known:
 * one claimed at its deadline may find an answer that came in time), the attempt.
 */
export function claimOf(job: ClaimedRun): Omit<Resumed, 'outcome'> {
  const { run, suspension } = job;
  const delegated = suspension !== undefined && isDelegation(suspension);
  const resolved = resolvedAtDue.get(job);
  const expired = resolved
    ? resolved.expiredAt !== null
    : run.input === null && run.deadlineAt !== null && run.deadlineAt.getTime() <= Date.now();
  const answer =
    run.input !== null
      ? resumeAnswerSchema.parse(run.input)
      : resolved && !expired
        ? resolved.answer
        : undefined;
  return {
    runId: run.runId,
    token: run.interactionId ?? '',
    conversationId: run.conversationId,
    answer,
    attempt: run.attempts,
    ...(delegated ? { delegated } : {}),
    ...(expired && run.deadlineAt ? { deadline: run.deadlineAt } : {}),
  };
}

/**
 * The executive's resume of ONE claimed run (the function it gives the package's
 * `RunWorker`, which claims, renews the lease and retries): resumes the turn with
 * `resumeMessages` and records how it ended in one transaction (one statement when it
 * completed) that commits only while the job's lease holds: completed, waiting on a new
 * question (saved first, then the old continuation marked resolved), or cancelled. A throw
 * is a failed attempt; one this runner can never resume is marked not to be retried. No
 * transaction or pooled connection is held while the model runs.
 */
export async function resumeRun(
  storage: Storage,
  job: RunJob,
  options: ResumeOptions,
): Promise<RunResult> {
  const { run, suspension } = job;
  const { runId, conversationId } = run;
  const token = run.interactionId ?? '';
  const ids = { runId, conversationId };
  const refusal = unresumable(job);
  // Claimed at its due time: the question's reminder, escalation or deadline is applied
  // (each once); it waits again, or resumes from the outcome.
  const due = run.input === null && !job.unreadable ? await applyDueOf(storage, job) : undefined;
  if (due?.status === 'reminded') return due;
  const applied = due?.resolved;
  if (applied) resolvedAtDue.set(job, applied);
  // Said once what the run resumes from is known, before anything of its turn happens.
  options.onClaimed?.(claimOf(job));
  const answer: ResumeAnswer = applied?.answer ?? resumeAnswerSchema.parse(run.input);
  const expiredAt = applied?.expiredAt ? run.deadlineAt : null;
  const { telemetry } = watching;
  // A cancel resumes nothing: it only needs a readable continuation to mark resolved.
  if (refusal !== undefined && (job.unreadable || answer.action !== 'cancel')) {
    // Resuming it would pair the answer with a turn this runner does not know: fail, never retry.
    throw Object.assign(new Error(refusal), { retryable: false });
  }
  if (!suspension) {
    await job.finish({
      status: 'cancelled',
      reason: 'its saved turn was resolved by another route',
    });
    return { status: 'cancelled', ...ids };
  }
  if (isDelegation(suspension)) return resumeDelegation(storage, job, suspension, options);
  if (answer.action === 'cancel') {
    await cancelRun(
      storage,
      job,
      expiredAt
        ? `no answer came before the deadline (${expiredAt.toISOString()}); its default (cancel) was applied`
        : 'the person cancelled',
    );
    if (telemetry) watchWait(telemetry, job, suspension, answer, applied, false);
    return { status: 'cancelled', ...ids };
  }
  // A model that cannot be made (a missing API key) fails this attempt.
  const model = modelOf(job, options);
  const result = await resultFor(storage, job, suspension, answer, expiredAt);
  const messages = resumeMessages(suspension, result);
  const observer = options.observerFor({ runId, token, conversationId });
  if (telemetry) watchWait(telemetry, job, suspension, answer, applied, true);
  let traceparent: string | undefined;
  const about = { conversationId, runId, model: model.id };
  const turn = await tracedTurn(about, storedTraceparent(run.meta), (span) => {
    traceparent = span?.traceparent;
    const watched = watchedModel(model, span);
    return runTurn(watched, messages, observer, {
      system: SYSTEM_PROMPT,
      tools: demoTools,
      gated: demoGatedTools,
      signal: job.signal,
      delegate: runDelegate(watched, observer, demoWorkers()),
      ...tracedTools(span),
    });
  });
  return finishTurnOf(storage, job, suspension, model, turn, options, traceparent);
}

/**
 * Observes the wait this attempt resumes from (its model call starts now), from what the
 * claim returned: the question's deadline applied here, or the answer that readied the run
 * (in the answer's transaction, at its time) and the continuation saved when it was asked.
 * A later attempt was claimed at its retry or a lost lease, not at the answer: only its
 * expired wait is known.
 */
function watchWait(
  telemetry: ExecutiveTelemetry,
  job: RunJob,
  suspension: Suspension,
  answer: ResumeAnswer,
  applied: AnsweredPause | undefined,
  resumes: boolean,
): void {
  const now = Date.now();
  const { attempts } = job.run;
  if (applied) {
    const answeredAt = applied.expiredAt ?? applied.resumedAt;
    const outcome: ObservedWait['outcome'] = applied.expiredAt ? 'expired' : applied.answer.action;
    const wait = { kind: applied.kind, outcome, createdAt: applied.createdAt, answeredAt };
    observeResume(telemetry, wait, attempts, now, resumes);
  } else if (attempts <= 1 && job.claimableAt) {
    const wait = {
      kind: questionKindOf(suspension.toolName ?? '', demoGatedTools),
      outcome: answer.action,
      createdAt: suspension.createdAt,
      answeredAt: job.claimableAt,
    };
    observeResume(telemetry, wait, attempts, now, resumes);
  }
}

/**
 * The tool result a resumed turn continues from. An accepted gated call runs first, with the
 * question's token as its idempotency key, and its result is recorded (fenced by the lease)
 * before the model sees it; a later attempt finds the record and never runs it again. A crash
 * between the run and the record runs the tool again with the same key: at-least-once
 * invocation with a stable key, so a tool that deduplicates by key has one effect.
 */
async function resultFor(
  storage: Storage,
  job: RunJob,
  suspension: Suspension,
  answer: ResumeAnswer,
  expiredAt: Date | null,
): Promise<ToolResultBlock> {
  const id = suspension.toolUseId;
  const use = suspension.assistant.content.find(
    (b): b is ToolUseBlock => b.type === 'tool_use' && b.id === id,
  );
  if (!use || !isGatedTool(demoGatedTools, use.name)) {
    return expiredAt ? expiredResult(id, answer, expiredAt) : answerResult(id, answer);
  }
  return gatedCallResult(demoGatedTools, use, answer, {
    token: job.run.interactionId ?? '',
    expiredAt,
    effects: storage.effects(),
    results: {
      result: (token) => storage.gatedResults().result(token),
      // Fenced by the lease: a worker that lost the run records nothing.
      record: (given) => recordGatedResult(storage, job, given),
    },
  });
}

/**
 * The deadline sweep of a run claimed at its question's due time (`applyDue` of
 * `@x/executive`); an expiry is the wait's end, recorded once, by the first attempt.
 */
async function applyDueOf(
  storage: Storage,
  job: RunJob,
): Promise<{ status: 'resolved'; resolved: AnsweredPause } | Reminded> {
  const outcome = await applyDue(flowOf(storage), job);
  if (outcome.status === 'resolved' && outcome.resolved.expiredAt && job.run.attempts <= 1) {
    traceWait(outcome.resolved);
  }
  return outcome;
}

function modelOf({ run }: ClaimedRun, options: ResumeOptions): Model {
  const modelId = (run.meta as { model?: unknown } | null)?.model;
  return options.modelFor(typeof modelId === 'string' ? modelId : '');
}

/**
 * A failed attempt's reason as the run records it: a record written by a newer version says
 * so (it stays unreadable however often it is tried); else the error's message.
 */
export function attemptError(error: unknown): string {
  if (writtenByNewerCode(error)) return writtenByNewer(error as Error);
  const message = error instanceof Error ? error.message : String(error);
  // A write cut by the database going away fails the attempt; the line says it was the database.
  if (failureOf(error) === 'unavailable') {
    return `database unavailable (${postgresCause(error) ?? message})`;
  }
  return message;
}

function writtenByNewerCode(error: unknown): boolean {
  return (
    ContinuationError.hasCode(error, 'unsupported_version') ||
    SessionError.hasCode(error, 'unsupported_version')
  );
}

/** A store refused what this run writes; it would refuse it again on every attempt. */
function refusedByStore(error: unknown): boolean {
  const failure = failureOf(error);
  const typed =
    ContinuationError.is(error) ||
    SessionError.is(error) ||
    AskUserError.is(error) ||
    ExecutiveError.is(error);
  return typed && (failure === 'usage' || failure === 'failed');
}

/**
 * Why this runner cannot resume a claimed run's saved turn: the record was written by a newer
 * version (or cannot be read), or the turn waits on a tool this runner does not offer (one
 * removed since, or added by a newer version); undefined when it can.
 */
function unresumable({ suspension, unreadable }: ClaimedRun): string | undefined {
  if (unreadable) {
    return unreadable.code === 'unsupported_version'
      ? writtenByNewer(unreadable)
      : `its saved turn cannot be read (${withoutOrigin(unreadable.message)}); it is not resumed`;
  }
  if (!suspension) return undefined;
  const tool =
    suspension.toolName ??
    suspension.assistant.content.find(
      (b): b is ToolUseBlock => b.type === 'tool_use' && b.id === suspension.toolUseId,
    )?.name;
  if (
    tool === undefined ||
    isHumanTool(tool) ||
    isGatedTool(demoGatedTools, tool) ||
    tool === DELEGATE_TOOL
  ) {
    return undefined;
  }
  return `tool "${tool}" is not offered by this runner: the saved turn waits on it, so it is not resumed`;
}

/** The reason of a run whose saved turn or state has a version newer than this code reads. */
function writtenByNewer(error: Error): string {
  return `its saved turn was written by a newer version of the runner (${withoutOrigin(error.message)}); it is not resumed`;
}

/** The fenced terminal write of a turn that reached a terminal state (`finishTurn` of `@x/executive`). */
function finishTurnOf(
  storage: Storage,
  job: RunJob,
  suspension: Suspension,
  model: Model,
  turn: TurnOutcome,
  { questionPolicy }: ResumeOptions,
  traceparent?: string,
): Promise<RunResult> {
  return finishTurn(flowOf(storage), job, suspension, model, turn, questionPolicy, traceparent);
}

/**
 * Resumes a run suspended on its delegate call: routes each answered worker question to its
 * worker and runs only the workers that are neither finished nor waiting (a finished worker
 * never runs again), making each
 * worker's step durable as it settles (fenced by the lease). When every worker finished,
 * their reports become the delegate call's result and the parent turn resumes, once. Else
 * the run waits on the same continuation again; an answer that arrived meanwhile makes it
 * ready at once, so no wake-up is lost.
 */
async function resumeDelegation(
  storage: Storage,
  job: RunJob,
  suspension: Suspension,
  options: ResumeOptions,
): Promise<RunResult> {
  const { runId, conversationId } = job.run;
  const token = job.run.interactionId ?? '';
  const ids = { runId, conversationId };
  const requester = requesterOf(job.run.meta);
  const model = modelOf(job, options);
  const stored: StoredDelegation = await loadDelegation(
    storage,
    suspension,
    { ...ids, ...(requester === undefined ? {} : { requester }) },
    model.id,
    options.questionPolicy ?? NO_QUESTION_POLICY,
  );
  const answers = await answersOf(storage, stored);
  if ([...answers.values()].some((a) => a.action === 'cancel')) {
    await cancelRun(storage, job, 'the person cancelled a worker question', {
      closeQuestions: true,
    });
    return { status: 'cancelled', ...ids };
  }
  const observer = options.observerFor({ runId, token, conversationId });
  for (const [worker, answer] of answers) {
    answerWorker(stored.delegation, worker, answer, observer);
  }
  let traceparent: string | undefined;
  const about = { conversationId, runId, model: model.id };
  // The workers' steps and the parent's resumed turn continue the run's trace, as one turn.
  const turn = await tracedTurn(about, storedTraceparent(job.run.meta), async (span) => {
    traceparent = span?.traceparent;
    // The questions its workers ask now are this turn's.
    stored.run.traceparent = traceparent;
    const watched = watchedModel(model, span);
    await runWorkers(stored.delegation, unsettledWorkers(stored.delegation), watched, observer, {
      ...demoWorkers(),
      signal: job.signal,
      // Each settled worker is recorded at once, only while this worker holds the lease.
      settled: () => saveSettled(flowOf(storage), job, stored),
    });
    if (!allFinished(stored.delegation)) return undefined;
    const messages = resumeMessages(suspension, delegateResult(stored.delegation));
    return runTurn(watched, messages, observer, {
      system: SYSTEM_PROMPT,
      tools: demoTools,
      gated: demoGatedTools,
      signal: job.signal,
      delegate: runDelegate(watched, observer, demoWorkers()),
      ...tracedTools(span),
    });
  });
  if (turn) return finishTurnOf(storage, job, suspension, model, turn, options, traceparent);
  return waitAgain(storage, job, stored);
}
