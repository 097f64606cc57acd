import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  type LeasePolicy,
  policyToolsOf,
  type QuestionPolicy,
  questionPolicyOf,
  shortFormForGated,
} from '@x/executive';
import {
  deferPolicySet,
  loadPolicySet,
  PolicyError,
  type PolicySource,
  type ShortForm,
} from '@x/policy';
import { usageError } from '../errors.js';
import { type Env, setting, VARIABLES } from './index.js';

/**
 * The six variables' short form, read once: RUNNER_AUDIENCE, RUNNER_QUORUM, RUNNER_DEADLINE,
 * RUNNER_REMIND, RUNNER_ESCALATE and RUNNER_REQUESTER_MAY_NOT_APPROVE, each by human tool
 * (RUNNER_REQUESTER_MAY_NOT_APPROVE's `*`: every one), compiled into Cedar rules where loaded.
 */
export function shortFormFromEnv(env: Env = process.env): ShortForm {
  const pairs = {
    audience: setting(VARIABLES.RUNNER_AUDIENCE, env),
    requesterMayNotApprove: setting(VARIABLES.RUNNER_REQUESTER_MAY_NOT_APPROVE, env),
    deadline: setting(VARIABLES.RUNNER_DEADLINE, env),
    remind: setting(VARIABLES.RUNNER_REMIND, env),
    escalate: setting(VARIABLES.RUNNER_ESCALATE, env),
    quorum: setting(VARIABLES.RUNNER_QUORUM, env),
  };
  return Object.fromEntries(Object.entries(pairs).filter(([, given]) => given !== undefined));
}

/**
 * The Cedar files of RUNNER_POLICY (or of `variable`, e.g. RUNNER_POLICY_SHADOW), read once: a
 * `.cedar` file, or a folder's `.cedar` files in name order; none when it is not set.
 * @throws {RunnerError} `usage` when it cannot be read.
 */
export function policySourcesFromEnv(
  env: Env = process.env,
  variable: typeof VARIABLES.RUNNER_POLICY = VARIABLES.RUNNER_POLICY,
): PolicySource[] {
  const given = setting(variable, env);
  if (given === undefined) return [];
  try {
    const files = statSync(given).isDirectory()
      ? readdirSync(given)
          .filter((name) => name.endsWith('.cedar'))
          .sort()
          .map((name) => path.join(given, name))
      : [given];
    return files.map((file) => ({ name: file, text: readFileSync(file, 'utf8') }));
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? String(error);
    throw usageError(`${variable.name}=${given} cannot be read (${why})`);
  }
}

/**
 * Loads a policy set for `tools` from the environment (the short form and RUNNER_POLICY's
 * files); a file that does not parse or validate is refused with its file, line and Cedar's
 * message. With neither set, nothing of a person's is there to refuse: the set of the tools
 * alone loads at its first decision, so that a process that decides nothing never starts Cedar.
 * @throws {RunnerError} `usage` naming RUNNER_POLICY or the variable at fault.
 */
export function loadPolicies(
  gated: Parameters<typeof policyToolsOf>[0],
  env: Env = process.env,
): ReturnType<typeof loadPolicySet> {
  const what = 'the policies (RUNNER_POLICY and the question variables)';
  return compilePolicies(gated, policySourcesFromEnv(env), what, env);
}

/**
 * Loads `sources` for `gated` with the environment's short form, as RUNNER_POLICY's files are:
 * a file that does not parse or validate is refused, naming `what`, its file and line. With
 * neither sources nor short form, the set of the tools alone loads at its first decision.
 * @throws {RunnerError} `usage`.
 */
export function compilePolicies(
  gated: Parameters<typeof policyToolsOf>[0],
  sources: readonly PolicySource[],
  what: string,
  env: Env = process.env,
): ReturnType<typeof loadPolicySet> {
  const given = shortFormFromEnv(env);
  const load = sources.length === 0 && !hasRules(given) ? deferPolicySet : loadPolicySet;
  try {
    return load({
      tools: policyToolsOf(gated),
      sources,
      shortForm: shortFormForGated(given, gated),
    });
  } catch (error) {
    if (!PolicyError.is(error)) throw error;
    throw usageError(`${what} are refused: ${error.reason}`);
  }
}

/**
 * The candidate set of RUNNER_POLICY_SHADOW (its Cedar files with the question variables), run
 * beside the active one; undefined when it is not set.
 * @throws {RunnerError} `usage` naming RUNNER_POLICY_SHADOW, the file and line at fault.
 */
export function loadShadowPolicies(
  gated: Parameters<typeof policyToolsOf>[0],
  env: Env = process.env,
): ReturnType<typeof loadPolicySet> | undefined {
  const sources = policySourcesFromEnv(env, VARIABLES.RUNNER_POLICY_SHADOW);
  if (sources.length === 0 && setting(VARIABLES.RUNNER_POLICY_SHADOW, env) === undefined) {
    return undefined;
  }
  return compilePolicies(gated, sources, 'the candidate policies (RUNNER_POLICY_SHADOW)', env);
}

/**
 * The question policy of the environment by a question's kind, the six variables compiled into
 * a policy set: for questions whose call the turn did not decide (a worker's). RUNNER_POLICY's
 * files name the turn's tools, so the turn's own policies (`loadPolicies`) decide with them.
 */
export function questionPolicyFromEnv(env: Env = process.env): QuestionPolicy {
  const given = shortFormFromEnv(env);
  const load = hasRules(given) ? loadPolicySet : deferPolicySet;
  return questionPolicyOf(load({ tools: policyToolsOf(), shortForm: shortFormForGated(given) }));
}

/** Whether any of the six variables is set: each becomes rules a person wrote. */
function hasRules(shortForm: ShortForm): boolean {
  return Object.keys(shortForm).length > 0;
}

/** The denial window and question cap of the environment: RUNNER_DENIAL_WINDOW_MS, RUNNER_MAX_QUESTIONS. */
export function policyLimitsFromEnv(env: Env = process.env): {
  denialWindowMs: number;
  maxQuestions: number;
} {
  return {
    denialWindowMs: setting(VARIABLES.RUNNER_DENIAL_WINDOW_MS, env),
    maxQuestions: setting(VARIABLES.RUNNER_MAX_QUESTIONS, env),
  };
}

/** The lease policy of the environment: RUNNER_LEASE_MS, RUNNER_MAX_ATTEMPTS, RUNNER_RETRY_BACKOFF_MS. */
export function leasePolicyFromEnv(env: Env = process.env): LeasePolicy {
  return {
    leaseMs: setting(VARIABLES.RUNNER_LEASE_MS, env),
    retry: {
      maxAttempts: setting(VARIABLES.RUNNER_MAX_ATTEMPTS, env),
      baseMs: setting(VARIABLES.RUNNER_RETRY_BACKOFF_MS, env),
      limitName: 'RUNNER_MAX_ATTEMPTS',
    },
  };
}
