import type { AnswerOptions, Pending, ResumeAnswer } from '@x/askuser';
import type { ExecutiveDatabase } from '@x/executive';
import { ApprovalCenterError } from '../errors.js';
import { accessOf } from '../identity/roles.js';

/** An operator as the host keeps them, for a channel to know who answers through it. */
export interface ChannelOperator {
  name: string;
  /** Their access role and audience roles. */
  roles: readonly string[];
  /** When their key was revoked: they answer no more. */
  revokedAt?: Date | null | undefined;
}

/**
 * How answers given through a channel (a decision link, a Slack button) are recorded: the
 * host's own answer (`@x/executive`'s `answer` with its gated tools and limits, in one
 * transaction with the answer's run made ready), the question it answers, its operators.
 */
export interface ChannelAnswers {
  /**
   * The pending question of `token`; the store's `not_found` (`AskUserError`) when it waits
   * no more. An executive storage's `(token) => storage.pauses().getByToken(token)`.
   */
  pending(token: string): Promise<Pending>;
  /** Every operator, revoked ones too. */
  operators(): Promise<readonly ChannelOperator[]>;
  /**
   * Records `given` as `by` says; `also` writes in the same transaction first (a decision
   * link consumed with its answer), so a link works once.
   */
  answer(
    token: string,
    given: ResumeAnswer,
    by: AnswerOptions,
    also?: (tx: ExecutiveDatabase) => Promise<void>,
  ): Promise<unknown>;
  /** An answer was recorded: the host's live feed and worker look again. */
  answered?: (() => void) | undefined;
  /**
   * Refuses an answerer before the store does (a viewer, a revoked operator); default an
   * {@link ApprovalCenterError} `forbidden` (a host may count refusals).
   */
  refuse?: ((message: string) => never) | undefined;
}

/** The `forbidden` refusal of an answerer, when the host gives no `refuse`. */
export function refuseAsForbidden(message: string): never {
  throw new ApprovalCenterError('forbidden', message);
}

/** How an operator answers: an admin by name (nothing checked), anyone else as their identity. */
function answeringAs(operator: ChannelOperator): Pick<AnswerOptions, 'answeredBy' | 'identity'> {
  return accessOf(operator.roles) === 'admin'
    ? { answeredBy: operator.name }
    : { identity: { name: operator.name, roles: [...operator.roles] } };
}

/**
 * Who the recipient of a decision link answers as, so the store checks the question's
 * audience when the answer is recorded, not only when the link was sent: the live operator
 * of that name (an admin answers anything, others as their identity), or, for an address
 * that names no operator, the address itself, which the audience must name or leave open.
 * @throws what `refuse` throws (default `forbidden`) for a revoked operator or a viewer.
 */
export function linkAnswerer(
  operators: readonly ChannelOperator[],
  address: string,
  refuse: (message: string) => never = refuseAsForbidden,
): Pick<AnswerOptions, 'answeredBy' | 'identity'> {
  const operator = operators.find((o) => o.name === address);
  if (!operator) return { identity: { name: address } };
  if (operator.revokedAt) refuse(`${address} is no longer an operator`);
  if (accessOf(operator.roles) === 'viewer')
    refuse(`${address} is a viewer: viewers do not answer`);
  return answeringAs(operator);
}

/**
 * Who a Slack user answers as: the live operator `mapped` names, else (not mapped) the one
 * named by the user's Slack `email`, letter case aside.
 * @throws what `refuse` throws for a user who is no live operator, or a viewer.
 */
export function slackAnswerer(
  operators: readonly ChannelOperator[],
  slackUser: string,
  by: { mapped: string | undefined; email: string | undefined; mapName: string },
  refuse: (message: string) => never = refuseAsForbidden,
): Pick<AnswerOptions, 'answeredBy' | 'identity'> {
  const { mapped, email, mapName } = by;
  const operator =
    mapped !== undefined
      ? operators.find((o) => o.name === mapped)
      : email && operators.find((o) => o.name.toLowerCase() === email);
  if (!operator || operator.revokedAt) {
    refuse(
      `Slack user ${slackUser} answers as no live operator (${mapName}, or an operator named by their Slack email)`,
    );
  }
  if (accessOf(operator.roles) === 'viewer') {
    refuse(`${operator.name} is a viewer: viewers do not answer`);
  }
  return answeringAs(operator);
}
