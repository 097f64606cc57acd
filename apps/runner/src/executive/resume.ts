import { AskUserError } from '@x/askuser';
import { ContinuationError } from '@x/continuation';
import type { AttemptCounts } from '@x/continuation-postgres';
import {
  type Claim,
  ExecutiveError,
  type LeasePolicy,
  type ModelFor,
  type QuestionPolicy,
  questionPolicyOf,
  type ReloadingPolicies,
  type RunKind,
  type RunResult,
  TURN_KIND,
  type TurnObserver,
  turnKind,
  writtenByNewer,
} from '@x/executive';
import type { PolicySet } from '@x/policy';
import { SessionError } from '@x/session';
import { policyLimitsFromEnv } from '../config/executive-policy.js';
import { demoGatedTools, demoTools, demoWorkers, SYSTEM_PROMPT } from '../demo/tools.js';
import { postgresCause } from '../errors.js';
import { failureOf } from '../failure.js';
import type { Storage } from '../storage/index.js';
import { runnerPolicyVersions, runnerShadowPolicies } from './start.js';
import { watching } from './telemetry.js';

/** False for an error that would fail again on every attempt: it is not retried. */
export function retryable(error: unknown): boolean {
  return !writtenByNewerCode(error) && !refusedByStore(error);
}

/** What became of one claimed run, as {@link resumeNext} reports it. */
export interface Resumed extends Claim {
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

/** Options of the runner's resume of a claimed run. */
export interface ResumeOptions {
  modelFor: ModelFor;
  /** The observer of a claimed run's turn. */
  observerFor(run: { runId: string; token: string; conversationId: string }): TurnObserver;
  /** Hears of a claimed run once what it resumes from is known, before anything of its turn happens. */
  onClaimed?(run: Claim): void;
  policy: LeasePolicy;
  /** The policy its workers' questions are asked under; default `policies`' by kind. */
  questionPolicy?: QuestionPolicy;
  /** Decide each gated call and question of a resumed turn; default `runnerPolicyVersions`. */
  policies?: PolicySet | ReloadingPolicies;
}

/** The runs the runner resumes: the demo agent's turns (its prompt, tools and workers). */
export function runnerKinds(options: ResumeOptions): Record<string, RunKind<Storage>> {
  const policies = options.policies ?? runnerPolicyVersions();
  const shadow = runnerShadowPolicies();
  const turn = turnKind<Storage>({
    modelFor: options.modelFor,
    system: SYSTEM_PROMPT,
    tools: demoTools,
    gated: demoGatedTools,
    effects: (storage) => storage.effects(),
    workers: demoWorkers(),
    observerFor: options.observerFor,
    policies,
    ...(shadow ? { shadow } : {}),
    policyLimits: policyLimitsFromEnv(),
    questionPolicy: options.questionPolicy ?? questionPolicyOf(policies),
    watching,
  });
  return { [TURN_KIND]: turn };
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
