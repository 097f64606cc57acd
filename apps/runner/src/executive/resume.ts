import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { AskUserError, type ResumeAnswer, resumeAnswerSchema } from '@x/askuser';
import { ContinuationError, resumeMessages, type Suspension } from '@x/continuation';
import type { ClaimedRun } from '@x/continuation-postgres';
import { SessionError } from '@x/session';
import type { ToolUseBlock } from '@x/wire';
import type { Model } from '../agent/model-port.js';
import { answerResult, DELEGATE_TOOL, isHumanTool } from '../agent/tools.js';
import { runTurn, type TurnObserver, type TurnOutcome } from '../agent/turn.js';
import { plural } from '../cli/output.js';
import { type Env, setting, VARIABLES } from '../config/index.js';
import {
  allFinished,
  answerWorker,
  delegateResult,
  runDelegate,
  runWorkers,
  unsettledWorkers,
} from '../delegation/run.js';
import { failureOf, ModelError, withoutOrigin } from '../errors.js';
import { lockFor, type Storage } from '../storage/index.js';
import {
  answersOf,
  delegatedResult,
  isDelegation,
  loadDelegation,
  type StoredDelegation,
  saveDelegation,
  suspendDelegation,
} from './stored-delegation.js';
import { type ModelFor, type RunResult, suspend } from './suspend.js';

/** How long a lease lasts unless renewed, and how many attempts a run gets. */
export interface LeasePolicy {
  leaseMs: number;
  maxAttempts: number;
  /** The wait before attempt `attempt + 1` after attempt `attempt` failed. */
  backoffMs(attempt: number): number;
}

const MAX_BACKOFF_MS = 300_000;

/** Exponential backoff with full jitter, capped at 5 minutes. */
export function backoffMs(attempt: number, baseMs = 1_000): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.min(attempt, 20));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** The policy from the environment: RUNNER_LEASE_MS, RUNNER_MAX_ATTEMPTS, RUNNER_RETRY_BACKOFF_MS. */
export function leasePolicyFromEnv(env?: Env): LeasePolicy {
  const base = setting(VARIABLES.RUNNER_RETRY_BACKOFF_MS, env);
  return {
    leaseMs: setting(VARIABLES.RUNNER_LEASE_MS, env),
    maxAttempts: setting(VARIABLES.RUNNER_MAX_ATTEMPTS, env),
    backoffMs: (attempt) => backoffMs(attempt - 1, base),
  };
}

/** What became of one claimed run, as {@link resumeNext} reports it. */
export interface Resumed {
  runId: string;
  /** The question whose answer the run resumed from. */
  token: string;
  conversationId: string;
  answer: ResumeAnswer;
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

/** How a run's attempts ended: with the worker gone (killed, or stalled past its lease), or with an error. */
export interface AttemptCounts {
  workerGone: number;
  errors: number;
}

/** `2 ended with the worker gone, 1 with an error`. */
export function describeAttempts({ workerGone, errors }: AttemptCounts): string {
  return `${workerGone} ended with the worker gone, ${errors} with an error`;
}

/** Options of {@link resumeNext}. */
export interface ResumeOptions {
  modelFor: ModelFor;
  /** The observer of a claimed run's turn. */
  observerFor(run: { runId: string; token: string; conversationId: string }): TurnObserver;
  /** Hears of a run as soon as it is claimed, before anything of its turn happens. */
  onClaimed?(run: Omit<Resumed, 'outcome'>): void;
  policy: LeasePolicy;
  /** Names this worker in its lease owners (`host/pid/worker#claim`); default `w1`. */
  worker?: string;
  /** Runs not to claim (those a `--once` pass already tried). */
  skip?: readonly string[];
  /**
   * Aborted when a stopping worker's grace is over: the turn in flight is cut (its model
   * call aborted) and the run's lease released.
   */
  graceOver?: AbortSignal;
}

let claims = 0;

/**
 * Claims ONE ready run (one statement, committed before anything else), resumes its turn
 * with `resumeMessages` while renewing the lease, and records how it ended in one
 * transaction (one statement when it completed) that commits only while this worker still
 * holds the lease: completed, waiting on a new question (saved first, then the old
 * continuation marked resolved), or cancelled. A failed model call backs off and retries
 * up to the policy's limit, then fails the run. No transaction or pooled connection is held
 * while the model runs.
 *
 * @returns undefined when no run is ready.
 */
export async function resumeNext(
  storage: Storage,
  options: ResumeOptions,
): Promise<Resumed | undefined> {
  // Unique per claim: it is the fencing token that the run's later writes must present.
  const owner = `${hostname()}/${process.pid}/${options.worker ?? 'w1'}#${++claims}.${randomUUID().slice(0, 8)}`;
  const holder = await storage.leaseHolder();
  const claimed = await storage.runs().claim({
    owner,
    leaseMs: options.policy.leaseMs,
    skip: options.skip ?? [],
    ...(holder === undefined ? {} : { holder }),
  });
  if (!claimed) return undefined;
  return resumeClaimed(storage, claimed, owner, options);
}

async function resumeClaimed(
  storage: Storage,
  claimed: ClaimedRun,
  owner: string,
  options: ResumeOptions,
): Promise<Resumed> {
  const { run, suspension } = claimed;
  const { runId, conversationId } = run;
  const token = run.interactionId ?? '';
  const answer = resumeAnswerSchema.parse(run.input);
  const report = (outcome: Resumed['outcome']): Resumed => ({
    runId,
    token,
    conversationId,
    answer,
    attempt: run.attempts,
    outcome,
  });
  const ids = { runId, conversationId };
  const delegated = suspension !== undefined && isDelegation(suspension);
  options.onClaimed?.({
    runId,
    token,
    conversationId,
    answer,
    attempt: run.attempts,
    ...(delegated ? { delegated } : {}),
  });
  const runs = storage.runs();
  try {
    const refusal = unresumable(claimed);
    // A cancel resumes nothing: it only needs a readable continuation to mark resolved.
    if (refusal !== undefined && (claimed.unreadable || answer.action !== 'cancel')) {
      // Resuming it would pair the answer with a turn this runner does not know: fail, never retry.
      await runs.fail(runId, owner, refusal, undefined);
      const attempts = { workerGone: run.lostAttempts, errors: run.attempts - run.lostAttempts };
      return report({ status: 'failed', ...ids, error: refusal, attempts });
    }
    if (!suspension) {
      await runs.finish(runId, owner, {
        status: 'cancelled',
        reason: 'its saved turn was resolved by another route',
      });
      return report({ status: 'cancelled', ...ids });
    }
    // The attempts before this claim used up the limit (usually the last of them with its
    // worker gone: an error would have failed the run then); this claim is no attempt.
    const before = run.attempts - 1;
    if (before >= options.policy.maxAttempts) {
      const attempts = { workerGone: run.lostAttempts, errors: before - run.lostAttempts };
      const error = `gave up after ${plural(before, 'attempt')} (${describeAttempts(attempts)}), the limit (RUNNER_MAX_ATTEMPTS=${options.policy.maxAttempts})`;
      await runs.giveUp(runId, owner, error);
      return {
        ...report({ status: 'failed', ...ids, error, attempts, gaveUp: true }),
        attempt: before,
      };
    }
    if (delegated) {
      const outcome = await resumeDelegation(storage, claimed, suspension, owner, options);
      return { ...report(outcome), delegated: true };
    }
    if (answer.action === 'cancel') {
      await storage.transaction(async (tx) => {
        await storage.runs(tx).finish(runId, owner, {
          status: 'cancelled',
          reason: 'the person cancelled',
        });
        await storage.continuations(tx).markResolved(token);
      });
      return report({ status: 'cancelled', ...ids });
    }
    const modelId = (run.meta as { model?: unknown } | null)?.model;
    const lease = keepLease(storage, runId, owner, options.policy.leaseMs, options.graceOver);
    let model: Model;
    let turn: TurnOutcome;
    try {
      // Inside the try: a model that cannot be made (a missing API key) fails this attempt.
      model = options.modelFor(typeof modelId === 'string' ? modelId : '');
      const messages = resumeMessages(suspension, answerResult(suspension.toolUseId, answer));
      const observer = options.observerFor({ runId, token, conversationId });
      turn = await runTurn(model, messages, observer, {
        signal: lease.signal,
        delegate: runDelegate(model, observer),
      });
    } catch (error) {
      await lease.stop();
      if (lease.lost) return report({ status: 'lease-lost', ...ids });
      if (lease.cut) return report(await releaseCut(storage, claimed, owner));
      return report(await failAttempt(storage, claimed, owner, error, options.policy));
    } finally {
      await lease.stop();
    }
    return report(await finishTurn(storage, claimed, suspension, owner, model, turn));
  } catch (error) {
    if (ContinuationError.hasCode(error, 'lease_lost'))
      return report({ status: 'lease-lost', ...ids });
    // This run's own record refused (over the store's limit, invalid): the run's failure,
    // recorded as such, never taken for the database being away.
    if (refusedByStore(error)) {
      return report(await failAttempt(storage, claimed, owner, error, options.policy));
    }
    throw error;
  }
}

/** A store refused what this run writes; it would refuse it again on every attempt. */
function refusedByStore(error: unknown): boolean {
  const failure = failureOf(error);
  const typed = ContinuationError.is(error) || SessionError.is(error) || AskUserError.is(error);
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
  if (tool === undefined || isHumanTool(tool) || tool === DELEGATE_TOOL) return undefined;
  return `tool "${tool}" is not offered by this runner: the saved turn waits on it, so it is not resumed`;
}

/** The reason of a run whose saved turn or state has a version newer than this code reads. */
function writtenByNewer(error: Error): string {
  return `its saved turn was written by a newer version of the runner (${withoutOrigin(error.message)}); it is not resumed`;
}

/** The fenced terminal write of a turn that reached a terminal state. */
async function finishTurn(
  storage: Storage,
  { run }: ClaimedRun,
  suspension: Suspension,
  owner: string,
  model: Model,
  turn: TurnOutcome,
): Promise<RunResult> {
  const { runId, conversationId } = run;
  const token = run.interactionId ?? '';
  if (turn.status === 'completed') {
    const added = turn.messages.slice(suspension.messages?.length ?? 0);
    await storage.runs().complete(runId, owner, added);
    return { status: 'completed', runId, conversationId, messages: turn.messages };
  }
  return storage.transaction(async (tx): Promise<RunResult> => {
    // The run first: a worker that lost its lease stops here, and the run row stays locked
    // until the rest is written.
    const next = randomUUID();
    const ids = { runId, conversationId };
    await storage.runs(tx).finish(runId, owner, { status: 'waiting', interactionId: next });
    const waiting =
      turn.status === 'delegated'
        ? await suspendDelegation(tx, storage, ids, model, turn, next)
        : await suspend(tx, storage, ids, model, turn, next);
    await storage.continuations(tx).markResolved(token);
    return waiting;
  });
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
  claimed: ClaimedRun,
  suspension: Suspension,
  owner: string,
  options: ResumeOptions,
): Promise<Resumed['outcome']> {
  const { runId, conversationId } = claimed.run;
  const token = claimed.run.interactionId ?? '';
  const ids = { runId, conversationId };
  const modelId = (claimed.run.meta as { model?: unknown } | null)?.model;
  const lease = keepLease(storage, runId, owner, options.policy.leaseMs, options.graceOver);
  let model: Model;
  let stored: StoredDelegation;
  let turn: TurnOutcome | undefined;
  try {
    model = options.modelFor(typeof modelId === 'string' ? modelId : '');
    stored = await loadDelegation(storage, suspension, ids, model.id);
    const answers = await answersOf(storage, stored);
    if ([...answers.values()].some((a) => a.action === 'cancel')) {
      await lease.stop();
      await storage.transaction(async (tx) => {
        await storage.runs(tx).finish(runId, owner, {
          status: 'cancelled',
          reason: 'the person cancelled a worker question',
        });
        await storage.continuations(tx).markResolved(token);
        await storage.pauses(tx).autoResolveForConversation(conversationId);
      });
      return { status: 'cancelled', ...ids };
    }
    const observer = options.observerFor({ runId, token, conversationId });
    for (const [worker, answer] of answers) {
      answerWorker(stored.delegation, worker, answer, observer);
    }
    const durable = stored;
    await runWorkers(stored.delegation, unsettledWorkers(stored.delegation), model, observer, {
      signal: lease.signal,
      // Each settled worker is recorded at once, only while this worker holds the lease.
      settled: () =>
        storage.transaction(async (tx) => {
          if (!(await storage.runs(tx).renew(runId, owner, options.policy.leaseMs))) {
            throw new ContinuationError('lease_lost', `run "${runId}" was taken over`);
          }
          await saveDelegation(tx, storage, durable);
        }),
    });
    if (allFinished(stored.delegation)) {
      const messages = resumeMessages(suspension, delegateResult(stored.delegation));
      turn = await runTurn(model, messages, observer, {
        signal: lease.signal,
        delegate: runDelegate(model, observer),
      });
    }
  } catch (error) {
    await lease.stop();
    if (lease.lost || ContinuationError.hasCode(error, 'lease_lost')) {
      return { status: 'lease-lost', ...ids };
    }
    if (lease.cut) return releaseCut(storage, claimed, owner);
    return failAttempt(storage, claimed, owner, error, options.policy);
  } finally {
    await lease.stop();
  }
  if (turn) return finishTurn(storage, claimed, suspension, owner, model, turn);
  const waiting = stored;
  await storage.transaction(async (tx) => {
    // The answer of a worker question takes this lock before it readies the run: either it
    // committed before the check below sees it, or it readies the run after this commits.
    await lockFor(tx, token);
    await storage.runs(tx).finish(runId, owner, { status: 'waiting', interactionId: token });
    const [answered] = (await answersOf(storage, waiting, tx)).values();
    if (answered) await storage.runs(tx).markReady(token, answered);
  });
  return delegatedResult(waiting);
}

/** Records a failed attempt: ready again after a backoff, or failed when none is left. */
async function failAttempt(
  storage: Storage,
  { run }: ClaimedRun,
  owner: string,
  error: unknown,
  policy: LeasePolicy,
): Promise<Resumed['outcome']> {
  // A record written by a newer version stays unreadable however often it is tried.
  const newer =
    ContinuationError.hasCode(error, 'unsupported_version') ||
    SessionError.hasCode(error, 'unsupported_version');
  const message = newer
    ? writtenByNewer(error)
    : error instanceof Error
      ? error.message
      : String(error);
  const ids = { runId: run.runId, conversationId: run.conversationId };
  const final = newer || (error instanceof ModelError && !error.retryable) || refusedByStore(error);
  const retryInMs =
    final || run.attempts >= policy.maxAttempts ? undefined : policy.backoffMs(run.attempts);
  await storage.runs().fail(run.runId, owner, message, retryInMs);
  const attempts = { workerGone: run.lostAttempts, errors: run.attempts - run.lostAttempts };
  return retryInMs === undefined
    ? { status: 'failed', ...ids, error: message, attempts }
    : { status: 'retrying', ...ids, error: message, retryInMs };
}

/**
 * Gives back a run whose turn was cut at a stop's grace deadline: claimable by any worker at
 * once, the attempt uncounted. The cut turn wrote nothing, and the release fences it off.
 */
async function releaseCut(
  storage: Storage,
  { run }: ClaimedRun,
  owner: string,
): Promise<Resumed['outcome']> {
  const ids = { runId: run.runId, conversationId: run.conversationId };
  const released = await storage.runs().release(run.runId, owner);
  return released ? { status: 'released', ...ids } : { status: 'lease-lost', ...ids };
}

/**
 * Renews the lease every third of its length while the turn runs; aborts the turn the
 * moment a renewal finds the lease taken over, or when `graceOver` is aborted (`cut`).
 */
function keepLease(
  storage: Storage,
  runId: string,
  owner: string,
  leaseMs: number,
  graceOver?: AbortSignal,
) {
  const controller = new AbortController();
  let cut = false;
  const onGraceOver = () => {
    cut = true;
    controller.abort(new Error(`run ${runId} was cut: the stopping worker's grace ran out`));
  };
  if (graceOver?.aborted) onGraceOver();
  else graceOver?.addEventListener('abort', onGraceOver, { once: true });
  let lost = false;
  let renewing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    renewing = storage
      .runs()
      .renew(runId, owner, leaseMs)
      .then((held) => {
        if (held) return;
        lost = true;
        controller.abort(new Error(`the lease of run ${runId} was taken over`));
      })
      // A renewal that fails (the database is away) is tried again at the next tick.
      .catch(() => {});
  }, leaseMs / 3);
  return {
    signal: controller.signal,
    get lost() {
      return lost;
    },
    get cut() {
      return cut;
    },
    async stop() {
      clearInterval(timer);
      graceOver?.removeEventListener('abort', onGraceOver);
      await renewing;
    },
  };
}
