import { accessOf } from '@x/approval-center';
import type { AnswerOptions } from '@x/askuser';
import { refuseAnswerer } from '../executive/record-answer.js';
import type { OperatorRecord } from '../storage/operators.js';

/**
 * Who the recipient of a decision link answers as, so the store checks the question's
 * audience when the answer is recorded, not only when the link was sent: the live operator
 * of that name (an admin answers anything, others as their identity), or, for an address
 * that names no operator, the address itself, which the audience must name or leave open.
 * @throws a forbidden error for a revoked operator or a viewer.
 */
export function linkAnswerer(
  operators: readonly OperatorRecord[],
  address: string,
): Pick<AnswerOptions, 'answeredBy' | 'identity'> {
  const operator = operators.find((o) => o.name === address);
  if (!operator) return { identity: { name: address } };
  if (operator.revokedAt) refuseAnswerer(`${address} is no longer an operator`);
  const access = accessOf(operator.roles);
  if (access === 'viewer') refuseAnswerer(`${address} is a viewer: viewers do not answer`);
  return access === 'admin'
    ? { answeredBy: operator.name }
    : { identity: { name: operator.name, roles: operator.roles } };
}
