import type { ModelAudience, Question } from '@x/executive';
import { setting, VARIABLES } from '../config/index.js';

/** Who may answer a question and for whom it asks, as the askuser store keeps them. */
export interface QuestionPolicy {
  audience: { names: string[]; roles: string[] };
  requester: string | null;
  requesterMayNotAnswer: boolean;
}

/**
 * The audience of a question: the policy's roles (RUNNER_AUDIENCE) narrowed by the one the
 * model named, never widened. With no policy for the tool the model's audience stands; with
 * one, only the model's roles that the policy names are kept (a name cannot be checked
 * against roles when the question is asked), and when none is left the policy's stands.
 */
export function questionAudience(
  policyRoles: readonly string[],
  named: ModelAudience | undefined,
): { names: string[]; roles: string[] } {
  const policy = { names: [], roles: [...policyRoles] };
  if (named === undefined || named.names.length + named.roles.length === 0) return policy;
  if (policyRoles.length === 0) return { names: [...named.names], roles: [...named.roles] };
  const roles = named.roles.filter((role) => policyRoles.includes(role));
  return roles.length > 0 ? { names: [], roles: [...new Set(roles)] } : policy;
}

/**
 * What the store keeps of who may answer `question`, asked on behalf of `requester`: its
 * audience ({@link questionAudience}), and whether RUNNER_REQUESTER_MAY_NOT_APPROVE bars the
 * requester from answering it (separation of duties).
 */
export function questionPolicy(
  question: Pick<Question, 'kind' | 'audience'>,
  requester: string | undefined,
): QuestionPolicy {
  const policyRoles = setting(VARIABLES.RUNNER_AUDIENCE)?.[question.kind] ?? [];
  const barred = setting(VARIABLES.RUNNER_REQUESTER_MAY_NOT_APPROVE);
  return {
    audience: questionAudience(policyRoles, question.audience),
    requester: requester ?? null,
    requesterMayNotAnswer:
      requester !== undefined && (barred?.has('*') === true || barred?.has(question.kind) === true),
  };
}
