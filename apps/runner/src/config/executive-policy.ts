import type { LeasePolicy, QuestionPolicy } from '@x/executive';
import { type Env, setting, VARIABLES } from './index.js';

/**
 * The question policy of the environment, read once: RUNNER_AUDIENCE, RUNNER_QUORUM,
 * RUNNER_DEADLINE, RUNNER_REMIND, RUNNER_ESCALATE and RUNNER_REQUESTER_MAY_NOT_APPROVE, each
 * by human tool (RUNNER_REQUESTER_MAY_NOT_APPROVE's `*`: every one).
 */
export function questionPolicyFromEnv(env: Env = process.env): QuestionPolicy {
  const audience = setting(VARIABLES.RUNNER_AUDIENCE, env);
  const barred = setting(VARIABLES.RUNNER_REQUESTER_MAY_NOT_APPROVE, env);
  const deadline = setting(VARIABLES.RUNNER_DEADLINE, env);
  const remind = setting(VARIABLES.RUNNER_REMIND, env);
  const escalate = setting(VARIABLES.RUNNER_ESCALATE, env);
  const quorum = setting(VARIABLES.RUNNER_QUORUM, env);
  return (kind) => {
    const roles = audience?.[kind];
    const rule = deadline?.[kind];
    const remindMs = remind?.[kind];
    const widen = escalate?.[kind];
    const needed = quorum?.[kind];
    return {
      ...(roles ? { audience: roles } : {}),
      ...(barred?.has('*') || barred?.has(kind) ? { requesterMayNotApprove: true } : {}),
      ...(rule ? { deadline: rule } : {}),
      ...(remindMs ? { remindMs } : {}),
      ...(widen ? { escalate: widen } : {}),
      ...(needed ? { quorum: needed } : {}),
    };
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
