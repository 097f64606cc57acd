import type { HumanAnswer, ModelAudience, Question } from './tools.js';

/**
 * What governs the questions of one human tool (`ask_user`, `approve`), as the `@x/askuser`
 * fields of its pause; each rule is optional and none means what its field says.
 */
export interface QuestionRules {
  /** The roles any one of which may answer; none: any operator, or whom the model named. */
  audience?: readonly string[];
  /** People by name who may answer too (a policy's `@name`s); none: only the roles. */
  audienceNames?: readonly string[];
  /** The requester may not answer their own question (separation of duties). */
  requesterMayNotApprove?: boolean;
  /** How long a question waits, and the default applied then (the outcome expired); none: it waits. */
  deadline?: { ms: number; answer: HumanAnswer };
  /** When its audience is reminded, in ms after it is asked; none: nobody is. */
  remindMs?: number;
  /** When its audience widens, in ms after it is asked, and by whom; none: it stays as asked. */
  escalate?: { ms: number; names: readonly string[]; roles: readonly string[] };
  /** How many distinct approvals (and declines) resolve it; none: the first answer does. */
  quorum?: { approvals: number; declines: number };
}

/**
 * The rules of the questions of each kind (a human tool's name), built once by the app (the
 * runner reads them from its environment) and passed to the flows that ask.
 *
 * @example
 * const policy: QuestionPolicy = (kind) =>
 *   kind === 'approve' ? { audience: ['finance'], quorum: { approvals: 2, declines: 1 } } : {};
 */
export type QuestionPolicy = (kind: string) => QuestionRules;

/** The policy that sets nothing: any operator answers any question, once, whenever. */
export const NO_QUESTION_POLICY: QuestionPolicy = () => ({});

/** Who may answer a question and for whom it asks, as the askuser store keeps them. */
export interface QuestionAnswerers {
  audience: { names: string[]; roles: string[] };
  requester: string | null;
  requesterMayNotAnswer: boolean;
}

/**
 * The audience of a question: the policy's roles narrowed by the one the model named, never
 * widened. With no policy for the tool the model's audience stands; with one, only the model's
 * roles that the policy names are kept (a name cannot be checked against roles when the
 * question is asked), and when none is left the policy's stands.
 */
export function questionAudience(
  policyRoles: readonly string[],
  named: ModelAudience | undefined,
  policyNames: readonly string[] = [],
): { names: string[]; roles: string[] } {
  const policy = { names: [...policyNames], roles: [...policyRoles] };
  if (named === undefined || named.names.length + named.roles.length === 0) return policy;
  if (policyRoles.length + policyNames.length === 0) {
    return { names: [...named.names], roles: [...named.roles] };
  }
  const roles = named.roles.filter((role) => policyRoles.includes(role));
  return roles.length > 0 ? { names: [], roles: [...new Set(roles)] } : policy;
}

/**
 * Who may answer `question`, asked on behalf of `requester`, under `policy`: its audience
 * ({@link questionAudience}), and whether the requester is barred from answering it.
 */
export function questionAnswerers(
  question: Pick<Question, 'kind' | 'audience'>,
  requester: string | undefined,
  policy: QuestionPolicy,
): QuestionAnswerers {
  const rules = policy(question.kind);
  return {
    audience: questionAudience(rules.audience ?? [], question.audience, rules.audienceNames),
    requester: requester ?? null,
    requesterMayNotAnswer: requester !== undefined && rules.requesterMayNotApprove === true,
  };
}

/** When a question stops waiting, and the default applied then (the outcome expired). */
export interface QuestionDeadline {
  at: Date;
  answer: HumanAnswer;
}

/**
 * The deadline of a new question: the policy's for its tool, or the model's own (the
 * `deadline` of its tool input) when that comes first; none: it waits.
 */
export function deadlineFor(
  question: Pick<Question, 'kind' | 'deadline'>,
  policy: QuestionPolicy,
  now = Date.now(),
): QuestionDeadline | undefined {
  const rule = policy(question.kind).deadline;
  const set = rule && { at: new Date(now + rule.ms), answer: rule.answer };
  const own = question.deadline;
  if (!own || (set && set.at <= own.at)) return set;
  return own;
}

/**
 * What the policy sets for a new question: its deadline, reminder, escalation and quorum,
 * and its run's due time, the earliest of those times (none: it waits).
 */
export interface QuestionTimes {
  deadline?: QuestionDeadline;
  remind?: { at: Date };
  escalate?: { at: Date; names: string[]; roles: string[] };
  quorum?: { approvals: number; declines: number };
  dueAt?: Date;
}

/** The {@link QuestionTimes} of a new question (its tool's rules, its own deadline). */
export function questionTimes(
  question: Pick<Question, 'kind' | 'deadline'>,
  policy: QuestionPolicy,
  now = Date.now(),
): QuestionTimes {
  const { remindMs, escalate, quorum } = policy(question.kind);
  const deadline = deadlineFor(question, policy, now);
  const times: QuestionTimes = {
    ...(deadline ? { deadline } : {}),
    ...(remindMs ? { remind: { at: new Date(now + remindMs) } } : {}),
    ...(escalate
      ? {
          escalate: {
            at: new Date(now + escalate.ms),
            names: [...escalate.names],
            roles: [...escalate.roles],
          },
        }
      : {}),
    ...(quorum ? { quorum: { ...quorum } } : {}),
  };
  const due = [times.deadline?.at, times.remind?.at, times.escalate?.at].filter(
    (at): at is Date => at !== undefined,
  );
  return due.length === 0
    ? times
    : { ...times, dueAt: new Date(Math.min(...due.map((at) => at.getTime()))) };
}
