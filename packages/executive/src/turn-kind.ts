import type { AnsweredPause, ResumeAnswer } from '@x/askuser';
import { resumeMessages, type Suspension } from '@x/continuation';
import type { ClaimedRun, RunJob } from '@x/continuation-postgres';
import type { PolicySet } from '@x/policy';
import type { ToolResultBlock, ToolUseBlock } from '@x/wire';
import {
  allFinished,
  answerWorker,
  delegateResult,
  runDelegate,
  runWorkers,
  unsettledWorkers,
  type WorkerOptions,
} from './delegation.js';
import { gatedCallResult } from './gated-call.js';
import { type EffectLog, type GatedTools, isGatedTool } from './gated-tools.js';
import type { Model } from './model-port.js';
import { type PolicyGateOptions, policyGate, questionPolicyOf } from './policy-gate.js';
import type { ReloadingPolicies } from './policy-versions.js';
import { NO_QUESTION_POLICY, type QuestionPolicy } from './question-policy.js';
import {
  cancelRun,
  finishTurn,
  recordGatedResult,
  saveSettled,
  waitAgain,
} from './resume-writes.js';
import type { ResumingRun, RunKind } from './run-kind.js';
import type { ExecutiveStorage } from './storage.js';
import { answersOf, isDelegation, loadDelegation } from './stored-delegation.js';
import { type ModelFor, type RunResult, requesterOf } from './suspend.js';
import {
  answerResult,
  DELEGATE_TOOL,
  expiredResult,
  isHumanTool,
  type OrdinaryTools,
  questionKindOf,
} from './tools.js';
import { runTurn, type TurnObserver } from './turn.js';
import {
  type ObservedWait,
  observeResume,
  storedTraceparent,
  tracedTools,
  tracedTurn,
  type Watching,
  watchedModel,
} from './watching.js';

/** Options of {@link turnKind}: the agent whose turns it resumes. */
export interface TurnKindOptions<S extends ExecutiveStorage = ExecutiveStorage> {
  /** The model of a resumed run, from the model id its meta saved (`meta.model`). */
  modelFor: ModelFor;
  /** The system prompt of every model call. */
  system: string;
  /** The tools that run as soon as they are called (the human tools are always offered). */
  tools: OrdinaryTools;
  /** Tools that run only once approved, with the question's token as their idempotency key. */
  gated?: GatedTools;
  /** Where approved gated calls record their effects, by key; default: nowhere. */
  effects?: (storage: S) => EffectLog;
  /** Offers the `delegate` tool, its workers given these options; default: not offered. */
  workers?: WorkerOptions;
  /** The observer of a resumed run's turn; default: one that ignores its events. */
  observerFor?(run: { runId: string; token: string; conversationId: string }): TurnObserver;
  /** The policy the questions of resumed turns are asked under; default none, or `policies`' by kind. */
  questionPolicy?: QuestionPolicy;
  /**
   * Decides every gated call and question of a resumed turn, with its arguments: allow, deny or
   * ask (see `policyGate`); default none: every such call asks under `questionPolicy`.
   */
  policies?: PolicySet | ReloadingPolicies;
  /** A candidate set whose outcome of each decision is recorded beside it, with no effect (see `policyGate`). */
  shadow?: PolicySet;
  /** The denial window and the question cap of `policies` (see `policyGate`); default 60 s, none. */
  policyLimits?: Pick<PolicyGateOptions, 'denialWindowMs' | 'maxQuestions'>;
  /** Who watches the turns (metrics, traces), read at each resume. */
  watching?: Watching;
}

const ignored: TurnObserver = { event: () => {} };
const noEffects: EffectLog = { apply: async () => ({ invocations: 1 }) };

/**
 * The executive's own turn loop as a run kind (runs that name no kind): resumes the saved
 * turn with `resumeMessages` from the answer (an accepted gated call runs first, its result
 * recorded under the lease before the model sees it), or a delegate call's workers, and
 * records how the turn ended in one transaction committed only while the lease holds. No
 * transaction or pooled connection is held while the model runs.
 *
 * @example
 * const kind = turnKind({ modelFor: () => model, system: 'Be brief.', tools: {} });
 */
export function turnKind<S extends ExecutiveStorage = ExecutiveStorage>(
  options: TurnKindOptions<S>,
): RunKind<S> {
  const gated = options.gated ?? {};
  const withPolicy =
    options.policies && !options.questionPolicy
      ? { ...options, questionPolicy: questionPolicyOf(options.policies) }
      : options;
  return {
    refuse: (run) => unofferedTool(run, gated),
    resume: (run) =>
      isDelegation(run.suspension)
        ? resumeDelegation(run, withPolicy)
        : resumeTurn(run, withPolicy),
  };
}

/** Why a saved turn cannot be resumed here: it waits on a tool not offered (any more, or yet). */
function unofferedTool({ suspension }: ClaimedRun, gated: GatedTools): string | undefined {
  if (!suspension) return undefined;
  const tool =
    suspension.toolName ??
    suspension.assistant.content.find(
      (b): b is ToolUseBlock => b.type === 'tool_use' && b.id === suspension.toolUseId,
    )?.name;
  if (
    tool === undefined ||
    isHumanTool(tool) ||
    isGatedTool(gated, tool) ||
    tool === DELEGATE_TOOL
  ) {
    return undefined;
  }
  return `tool "${tool}" is not offered by this runner: the saved turn waits on it, so it is not resumed`;
}

async function resumeTurn<S extends ExecutiveStorage>(
  run: ResumingRun<S>,
  options: TurnKindOptions<S>,
): Promise<RunResult> {
  const { flow, job, suspension, answer, expiredAt, resolved } = run;
  const { runId, conversationId } = job.run;
  const token = job.run.interactionId ?? '';
  const watching = options.watching ?? {};
  const { telemetry } = watching;
  if (answer.action === 'cancel') {
    await cancelRun(
      flow.storage,
      job,
      expiredAt
        ? `no answer came before the deadline (${expiredAt.toISOString()}); its default (cancel) was applied`
        : 'the person cancelled',
    );
    if (telemetry) watchWait(watching, job, suspension, answer, resolved, false, options.gated);
    return { status: 'cancelled', runId, conversationId };
  }
  // A model that cannot be made (a missing API key) fails this attempt.
  const model = modelOf(job, options);
  const result = await resultFor(run, options);
  const messages = resumeMessages(suspension, result);
  const observer = (options.observerFor ?? (() => ignored))({ runId, token, conversationId });
  if (telemetry) watchWait(watching, job, suspension, answer, resolved, true, options.gated);
  let traceparent: string | undefined;
  const about = { conversationId, runId, model: model.id };
  const turn = await tracedTurn(watching, about, storedTraceparent(job.run.meta), (span) => {
    traceparent = span?.traceparent;
    const watched = watchedModel(watching, model, span);
    const turnWith = turnOptions(options, watched, observer, job, span, run.storage);
    return runTurn(watched, messages, observer, turnWith);
  });
  const policy = options.questionPolicy;
  return finishTurn(flow, job, suspension, model, turn, policy, traceparent);
}

/** `runTurn`'s options of a resumed turn. */
function turnOptions<S extends ExecutiveStorage>(
  options: TurnKindOptions<S>,
  model: Model,
  observer: TurnObserver,
  job: RunJob,
  span: Parameters<typeof tracedTools>[0],
  storage: S,
): Parameters<typeof runTurn>[3] {
  const gated = options.gated ?? {};
  const { runId, conversationId } = job.run;
  return {
    system: options.system,
    tools: options.tools,
    gated,
    signal: job.signal,
    ...(options.policies
      ? {
          gate: policyGate({
            policies: options.policies,
            ...(options.shadow ? { shadow: options.shadow } : {}),
            storage,
            run: { runId, conversationId },
            requester: requesterOf(job.run.meta),
            gated,
            effects: options.effects?.(storage) ?? noEffects,
            ...options.policyLimits,
          }),
        }
      : {}),
    ...(options.workers ? { delegate: runDelegate(model, observer, options.workers) } : {}),
    ...tracedTools(span),
  };
}

/**
 * Observes the wait this attempt resumes from (its model call starts now), from what the
 * claim returned: the question's deadline applied here, or the answer that readied the run
 * (in the answer's transaction, at its time) and the continuation saved when it was asked.
 * A later attempt was claimed at its retry or a lost lease, not at the answer: only its
 * expired wait is known.
 */
function watchWait(
  { telemetry }: Watching,
  job: RunJob,
  suspension: Suspension,
  answer: ResumeAnswer,
  applied: AnsweredPause | undefined,
  resumes: boolean,
  gated: GatedTools = {},
): void {
  if (!telemetry) return;
  const now = Date.now();
  const { attempts } = job.run;
  if (applied) {
    const answeredAt = applied.expiredAt ?? applied.resumedAt;
    const outcome: ObservedWait['outcome'] = applied.expiredAt ? 'expired' : applied.answer.action;
    const wait = { kind: applied.kind, outcome, createdAt: applied.createdAt, answeredAt };
    observeResume(telemetry, wait, attempts, now, resumes);
  } else if (attempts <= 1 && job.claimableAt) {
    const wait = {
      kind: questionKindOf(suspension.toolName ?? '', gated),
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
async function resultFor<S extends ExecutiveStorage>(
  { storage, job, suspension, answer, expiredAt }: ResumingRun<S>,
  options: TurnKindOptions<S>,
): Promise<ToolResultBlock> {
  const gated = options.gated ?? {};
  const id = suspension.toolUseId;
  const use = suspension.assistant.content.find(
    (b): b is ToolUseBlock => b.type === 'tool_use' && b.id === id,
  );
  if (!use || !isGatedTool(gated, use.name)) {
    return expiredAt ? expiredResult(id, answer, expiredAt) : answerResult(id, answer);
  }
  return gatedCallResult(gated, use, answer, {
    token: job.run.interactionId ?? '',
    expiredAt,
    effects: options.effects?.(storage) ?? noEffects,
    results: {
      result: (token) => storage.gatedResults().result(token),
      // Fenced by the lease: a worker that lost the run records nothing.
      record: (given) => recordGatedResult(storage, job, given),
    },
  });
}

function modelOf({ run }: ClaimedRun, options: { modelFor: ModelFor }): Model {
  const modelId = (run.meta as { model?: unknown } | null)?.model;
  return options.modelFor(typeof modelId === 'string' ? modelId : '');
}

/**
 * Resumes a run suspended on its delegate call: routes each answered worker question to its
 * worker and runs only the workers that are neither finished nor waiting (a finished worker
 * never runs again), making each worker's step durable as it settles (fenced by the lease).
 * When every worker finished, their reports become the delegate call's result and the parent
 * turn resumes, once. Else the run waits on the same continuation again; an answer that
 * arrived meanwhile makes it ready at once, so no wake-up is lost.
 */
async function resumeDelegation<S extends ExecutiveStorage>(
  { flow, storage, job, suspension }: ResumingRun<S>,
  options: TurnKindOptions<S>,
): Promise<RunResult> {
  const { runId, conversationId } = job.run;
  const token = job.run.interactionId ?? '';
  const ids = { runId, conversationId };
  const watching = options.watching ?? {};
  const requester = requesterOf(job.run.meta);
  const model = modelOf(job, options);
  const stored = await loadDelegation(
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
  const observer = (options.observerFor ?? (() => ignored))({ runId, token, conversationId });
  for (const [worker, answer] of answers) {
    answerWorker(stored.delegation, worker, answer, observer);
  }
  let traceparent: string | undefined;
  const about = { conversationId, runId, model: model.id };
  // The workers' steps and the parent's resumed turn continue the run's trace, as one turn.
  const turn = await tracedTurn(watching, about, storedTraceparent(job.run.meta), async (span) => {
    traceparent = span?.traceparent;
    // The questions its workers ask now are this turn's.
    stored.run.traceparent = traceparent;
    const watched = watchedModel(watching, model, span);
    await runWorkers(stored.delegation, unsettledWorkers(stored.delegation), watched, observer, {
      ...options.workers,
      signal: job.signal,
      // Each settled worker is recorded at once, only while this worker holds the lease.
      settled: () => saveSettled(flow, job, stored),
    });
    if (!allFinished(stored.delegation)) return undefined;
    const messages = resumeMessages(suspension, delegateResult(stored.delegation));
    const turnWith = turnOptions(options, watched, observer, job, span, storage);
    return runTurn(watched, messages, observer, turnWith);
  });
  if (turn) {
    return finishTurn(flow, job, suspension, model, turn, options.questionPolicy, traceparent);
  }
  return waitAgain(storage, job, stored);
}
