/** The three outcomes, strongest first: a deny beats an ask, an ask beats an allow. */
export type Outcome = 'deny' | 'ask' | 'allow';

/** Who may answer: roles any one of which suffices, and people by name; both empty: any operator. */
export interface Audience {
  names: string[];
  roles: string[];
}

/** What a question's deadline applies when nobody answered in time. */
export interface DefaultAnswer {
  action: 'decline' | 'cancel' | 'accept';
  /** For `accept`: the answer's text; empty otherwise. */
  content: string;
}

/** How serious a rule says its question is. */
export type Severity = 'low' | 'medium' | 'high' | 'critical';

/** The severities, least first. */
export const SEVERITIES: readonly Severity[] = ['low', 'medium', 'high', 'critical'];

/** How a question is asked, from the annotations of the rules that ask it. */
export interface AskSettings {
  /** Who may answer; both lists empty: any operator. */
  audience: Audience;
  /** How many distinct approvals accept it and how many declines decline it; null: the first answer. */
  quorum: { approvals: number; declines: number } | null;
  /** How long it waits and the default applied then; null: it waits. */
  deadline: { ms: number; answer: DefaultAnswer } | null;
  /** When its audience is reminded, in ms after it is asked; null: never. */
  remindMs: number | null;
  /** When its audience widens, in ms after it is asked, and by whom; null: never. */
  escalate: { ms: number; names: string[]; roles: string[] } | null;
  /** The requester may not answer their own question (separation of duties). */
  requesterMayNotAnswer: boolean;
  severity: Severity | null;
}

/** What the policy set decided for one call, with the rules that decided it and the set's hash. */
export type Decision =
  | {
      /** Run the call with no person; record the reason and rules. */
      outcome: 'allow';
      reason: string;
      ruleIds: string[];
      policyHash: string;
    }
  | {
      /** Do not run the call; return the reason to the model as the tool's result. */
      outcome: 'deny';
      reason: string;
      ruleIds: string[];
      policyHash: string;
    }
  | {
      /** Ask a person, as `ask` says. */
      outcome: 'ask';
      reason: string;
      ruleIds: string[];
      policyHash: string;
      ask: AskSettings;
      /** Why deciding failed, shown on the question (then the admins are asked); null when it did not. */
      error: string | null;
    };
