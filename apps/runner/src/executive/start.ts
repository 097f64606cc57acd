import { randomUUID } from 'node:crypto';
import type { RunRecord } from '@x/continuation-postgres';
import {
  type Grant,
  grantScopes,
  type Model,
  type OpenWork,
  openWork,
  policyGate,
  type QuestionPolicy,
  questionPolicyOf,
  ReloadingPolicies,
  type Reminded,
  type RunResult,
  recordStart,
  retry,
  runDelegate,
  runTurn,
  type Stopped,
  stop,
  type TurnObserver,
  tracedTools,
  tracedTurn,
  watchedModel,
} from '@x/executive';
import type { PolicySet, PolicySource } from '@x/policy';
import { userMessage } from '@x/wire';
import {
  compilePolicies,
  loadPolicies,
  loadShadowPolicies,
  policyLimitsFromEnv,
} from '../config/executive-policy.js';
import { type Env, questionPolicyOf as questionVariablesOf } from '../config/index.js';
import { demoGatedTools, demoTools, demoWorkers, SYSTEM_PROMPT } from '../demo/tools.js';
import { notFoundError, RunnerError } from '../errors.js';
import type { Storage } from '../storage/index.js';
import { flowOf } from './suspend.js';
import { watching } from './telemetry.js';

/** The policies of the demo agent's turns: configured, following the loaded versions, and the candidate. */
interface RunnerPolicies {
  policies: PolicySet;
  versions: ReloadingPolicies;
  shadow: PolicySet | undefined;
}

const loaded = new Map<string, RunnerPolicies>();

/** The {@link RunnerPolicies} of `env`, loaded once per value of the question variables. */
function loadedPolicies(env: Env): RunnerPolicies {
  const key = JSON.stringify(questionVariablesOf(env));
  const known = loaded.get(key);
  if (known) return known;
  const policies = loadPolicies(demoGatedTools, env);
  const shadow = loadShadowPolicies(demoGatedTools, env);
  const versions = new ReloadingPolicies({
    initial: policies,
    compile: (sources) => compileRunnerPolicies(sources, env),
  });
  const made = { policies, versions, shadow };
  loaded.set(key, made);
  return made;
}

/**
 * The policies of the demo agent's turns, loaded once per value of the question variables and
 * RUNNER_POLICY: the six variables' short form and RUNNER_POLICY's Cedar files, over the human
 * tools and the demo's gated tools. RUNNER_POLICY_SHADOW's candidate is loaded (and refused) with them.
 * @throws {RunnerError} `usage` for a file that does not parse or validate (its file and line).
 */
export function runnerPolicies(env: Env = process.env): PolicySet {
  return loadedPolicies(env).policies;
}

/**
 * {@link runnerPolicies} following the versions `runner policy load` records: a running
 * worker decides with the newest from its next decision.
 */
export function runnerPolicyVersions(env: Env = process.env): ReloadingPolicies {
  return loadedPolicies(env).versions;
}

/** RUNNER_POLICY_SHADOW's candidate set, run beside the active one; undefined when not set. */
export function runnerShadowPolicies(env: Env = process.env): PolicySet | undefined {
  return loadedPolicies(env).shadow;
}

/**
 * Cedar files (`runner policy load`'s, or a loaded version's) over the demo agent's tools with
 * the question variables, as RUNNER_POLICY's are loaded.
 * @throws {RunnerError} `usage` for a file that does not parse or validate (its file and line).
 */
export function compileRunnerPolicies(
  sources: readonly PolicySource[],
  env: Env = process.env,
): PolicySet {
  return compilePolicies(demoGatedTools, sources, 'the policy files', env);
}

/**
 * The loop-stop path (`stop` of `@x/executive`): resolves every open pause of the
 * conversation, marks its continuations resolved and cancels its runs, in one transaction.
 */
export async function stopConversation(storage: Storage, conversationId: string): Promise<Stopped> {
  const stopped = await stop(flowOf(storage), conversationId);
  for (let run = 0; run < stopped.runs; run++) watching.telemetry?.runEnded('cancelled');
  return stopped;
}

/**
 * `runner stop` and the API's stop: {@link stopConversation}, where a conversation that had
 * nothing open and no recorded run is `not_found` (exit 3, HTTP 404).
 */
export async function stopKnownConversation(
  storage: Storage,
  conversationId: string,
): Promise<Stopped> {
  const closed = await stopConversation(storage, conversationId);
  const nothing = closed.pauses + closed.continuations + closed.runs === 0;
  if (nothing && (await storage.runs().list({ conversationId, limit: 1 })).length === 0) {
    throw notFoundError(`no conversation ${conversationId}: no run of it is recorded`);
  }
  return closed;
}

/**
 * A conversation's open work as a refusal: what a new exec would cancel and how to go on.
 * `command` prints a runner command line; `replace` is the exec that starts over.
 */
function openWorkError(
  open: OpenWork,
  command: (line: string) => string,
  replace: string,
): RunnerError {
  const [question] = open.questions;
  const [run] = open.runs;
  let what: string;
  let next: string;
  if (question) {
    const more = open.questions.length > 1 ? ` and ${open.questions.length - 1} more` : '';
    what = `an open question (token ${question.token}: ${JSON.stringify(question.question)})${more}`;
    next = `answer it (${command(`answer ${question.token} --accept TEXT`)})`;
  } else if (run?.status === 'failed') {
    what = `a failed run ${run.runId} that retry can resume`;
    next = `retry it (${command(`retry ${run.runId}`)})`;
  } else {
    what = `run ${run?.runId} ${run?.status === 'running' ? 'being resumed' : 'answered and not resumed yet'}`;
    next = `let it finish (${command('wake --once')})`;
  }
  return new RunnerError(
    'conflict',
    `conversation ${open.conversationId} has ${what}, which a new exec would cancel; ${next}, stop it (${command(`stop ${open.conversationId}`)}), or start over with: ${replace}`,
  );
}

/** Options of {@link startRun}. */
export interface StartOptions {
  /**
   * Start over on a conversation with open questions or unfinished runs: they are stopped
   * first (`onStopped` hears of it before the turn starts). Without it such a conversation is
   * refused with a `conflict`, so that no question is ever cancelled as a side effect.
   */
  replace?: boolean;
  onStopped?: (stopped: Stopped) => void;
  /** How the refusal names commands: a command line, and the exec that replaces. */
  hints?: { command: (line: string) => string; replace: string };
  /**
   * The person the run acts for: stored with its questions (and the run's meta, for those it
   * asks later), where the question policy may bar them from answering.
   */
  requester?: string;
  /**
   * The policy its workers' questions are asked under (who answers, by when, how many); default
   * `policies`' by kind.
   */
  questionPolicy?: QuestionPolicy;
  /** Decide each gated call and question of its turn: allow, deny or ask; default {@link runnerPolicyVersions}. */
  policies?: PolicySet | ReloadingPolicies;
  /** A candidate set recorded beside each decision, with no effect; default {@link runnerShadowPolicies}. */
  shadow?: PolicySet | undefined;
  /** Calls allowed with no person where the policies would ask (`exec --pre-approve`), granted to the run. */
  preApproved?: readonly Grant[];
  /**
   * The conversation id was made up for this run (exec without `--conversation`): it has no
   * open work to look for or stop, so nothing is read or written before the turn.
   */
  fresh?: boolean;
}

/**
 * `runner exec`: runs a goal until the turn completes or waits on a person, and records
 * the run. A conversation that still has open questions or unfinished runs is refused, or
 * with `replace` stopped first, so its transcript never holds a tool_use without its
 * tool_result.
 * @throws {RunnerError} `conflict` for a conversation with open work, without `replace`.
 */
export async function startRun(
  storage: Storage,
  model: Model,
  goal: string,
  conversationId: string,
  observer: TurnObserver,
  options: StartOptions = {},
): Promise<Exclude<RunResult, Reminded> & { stopped: Stopped }> {
  let stopped: Stopped = { pauses: 0, continuations: 0, runs: 0 };
  // A made-up id (`fresh`) names no conversation yet: nothing to stop or refuse.
  if (options.fresh) {
    // Neither read nor written.
  } else if (options.replace) {
    stopped = await stopConversation(storage, conversationId);
    options.onStopped?.(stopped);
  } else {
    const open = await openWork(storage, conversationId);
    if (open) {
      const command = options.hints?.command ?? ((line: string) => `runner ${line}`);
      const replace =
        options.hints?.replace ?? command(`exec GOAL --conversation ${conversationId} --replace`);
      throw openWorkError(open, command, replace);
    }
  }
  const runId = randomUUID();
  const started = Date.now();
  const policies = options.policies ?? runnerPolicyVersions();
  const shadow = 'shadow' in options ? options.shadow : runnerShadowPolicies();
  const { requester, questionPolicy: policy = questionPolicyOf(policies) } = options;
  const gate = policyGate({
    policies,
    ...(shadow ? { shadow } : {}),
    storage,
    run: { runId, conversationId },
    requester,
    gated: demoGatedTools,
    effects: storage.effects(),
    ...policyLimitsFromEnv(),
  });
  // Granted before the turn asks anything; a refused scope fails the run before it starts.
  if (options.preApproved?.length) await grantScopes(storage.db, runId, options.preApproved);
  let traceparent: string | undefined;
  const outcome = await tracedTurn(
    watching,
    { conversationId, runId, model: model.id },
    undefined,
    (span) => {
      traceparent = span?.traceparent;
      const watched = watchedModel(watching, model, span);
      return runTurn(watched, [userMessage(goal)], observer, {
        system: SYSTEM_PROMPT,
        tools: demoTools,
        gated: demoGatedTools,
        delegate: runDelegate(watched, observer, demoWorkers()),
        gate,
        ...tracedTools(span),
      });
    },
  );
  const meta = {
    model: model.id,
    ...(requester === undefined ? {} : { requester }),
    ...(traceparent ? { traceparent } : {}),
  };
  const run = {
    runId,
    conversationId,
    ...(requester === undefined ? {} : { requester }),
    traceparent,
  };
  const result = await recordStart(flowOf(storage), run, model, outcome, meta, policy);
  if (result.status === 'completed') {
    watching.telemetry?.runEnded('completed', (Date.now() - started) / 1000);
  }
  return { ...result, stopped };
}

/**
 * Makes a failed run ready again (`runner retry`, `POST /api/runs/:id/retry`): `retry` of
 * `@x/executive`, whose `conflict` for a run that is not failed the runner's error table maps.
 */
export const retryRun = (storage: Storage, runId: string): Promise<RunRecord> =>
  retry(storage, runId);
