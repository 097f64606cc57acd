import { z } from 'zod';

// `GET /api/policies`: the Policies tab's response, a schema first and its type from it.

/** A decision's outcome: run with no person, refuse, or ask a person. */
export const policyOutcomeSchema = z.enum(['allow', 'deny', 'ask']);

/** How many decisions of each outcome. */
export const outcomeCountsSchema = z
  .object({
    allow: z.number().int().min(0),
    deny: z.number().int().min(0),
    ask: z.number().int().min(0),
  })
  .strict();

/** How many decisions of each outcome. */
export type OutcomeCounts = z.infer<typeof outcomeCountsSchema>;

const whoSchema = z.object({ names: z.array(z.string()), roles: z.array(z.string()) }).strict();

/** One rule of the active policy set, as the Policies tab shows it. */
export const policyRuleViewSchema = z
  .object({
    /** Its `@id`, or `FILE:LINE` when it has none. */
    id: z.string(),
    /** What it decides when it matches: a `forbid` denies, a `permit` with `@ask` asks, any other allows. */
    outcome: policyOutcomeSchema,
    /**
     * `hard`: it denies outright, nobody can let the call through (a `forbid`); `soft`: it asks
     * a person, who may (a `permit` with `@ask`); `null`: it allows.
     */
    denial: z.enum(['hard', 'soft']).nullable(),
    /** Its `@reason`, or `null`. */
    reason: z.string().nullable(),
    /** `@audience`: who may answer its question; `null` when it does not say. */
    audience: whoSchema.nullable(),
    /** `@quorum`: the approvals (and declines) its question needs; `null` when it does not say. */
    quorum: z
      .object({ approvals: z.number().int(), declines: z.number().int() })
      .strict()
      .nullable(),
    /** `@deadline` and `@default`: how long its question waits, and what is applied then. */
    deadline: z
      .object({
        ms: z.number().int(),
        answer: z
          .object({ action: z.enum(['accept', 'decline', 'cancel']), content: z.string() })
          .strict(),
      })
      .strict()
      .nullable(),
    /** `@remind`: when its question's audience is reminded, in ms after it is asked. */
    remindMs: z.number().int().nullable(),
    /** `@escalate`: when its question's audience widens, and to whom. */
    escalate: whoSchema.extend({ ms: z.number().int() }).strict().nullable(),
    /** `@requesterMayNotAnswer`: the requester may not answer its question. */
    requesterMayNotAnswer: z.boolean(),
    /** `@severity`, or `null`. */
    severity: z.enum(['low', 'medium', 'high', 'critical']).nullable(),
    /** Where it is written. */
    location: z.object({ file: z.string(), line: z.number().int() }).strict(),
    /** What it decided in the window (`days`), counted by its id. */
    decided: outcomeCountsSchema,
  })
  .strict();

/** One rule of the active policy set, as the Policies tab shows it. */
export type PolicyRuleView = z.infer<typeof policyRuleViewSchema>;

/** One outcome of a shadow disagreement: what a set decided, and why. */
const shadowOutcomeSchema = z
  .object({
    outcome: policyOutcomeSchema,
    reason: z.string(),
    ruleIds: z.array(z.string()),
    policyHash: z.string(),
  })
  .strict();

/**
 * A decision on which the candidate policy set running in shadow disagreed with the active
 * one: what each decided, and what people answered when a question was asked.
 */
export const shadowDisagreementViewSchema = z
  .object({
    decidedAt: z.string(),
    conversationId: z.string(),
    tool: z.string(),
    /** The call's arguments, as recorded. */
    arguments: z.unknown(),
    /** The question the active set asked, if it asked one. */
    token: z.string().nullable(),
    active: shadowOutcomeSchema,
    /** What the candidate would have decided; `error` when deciding failed. */
    candidate: shadowOutcomeSchema.extend({ error: z.string().nullable() }).strict(),
    /** What people answered the active set's question: null when none was asked or answered. */
    answer: z.enum(['accept', 'decline', 'cancel', 'expired']).nullable(),
  })
  .strict();

/** A decision on which the candidate policy set running in shadow disagreed with the active one. */
export type ShadowDisagreementView = z.infer<typeof shadowDisagreementViewSchema>;

/** The most days `GET /api/policies?days=` counts back. */
export const MAX_POLICY_DAYS = 90;

/** `GET /api/policies?days=N` (1 to {@link MAX_POLICY_DAYS}, default 7). */
export const policiesResponseSchema = z
  .object({
    /** The active policy set: its hash (which version decides) and its rules in load order. */
    policySet: z.object({ hash: z.string(), rules: z.array(policyRuleViewSchema) }).strict(),
    /** How many days back the counts go, and from when (ISO time, server clock). */
    days: z.number().int().min(1).max(MAX_POLICY_DAYS),
    since: z.string(),
    /** Rules no longer in the set (an earlier version's) that decided in the window. */
    otherRules: z.array(z.object({ id: z.string(), decided: outcomeCountsSchema }).strict()),
    /** Decisions no rule made in the window: no rule matched, or the arguments did not fit. */
    withoutRule: outcomeCountsSchema,
    /**
     * The shadow disagreements in the window, oldest first, at most 100; `null` when no
     * candidate set runs in shadow (the center was not given `policies.shadow`).
     */
    shadow: z
      .object({ disagreements: z.array(shadowDisagreementViewSchema) })
      .strict()
      .nullable(),
  })
  .strict();

/** `GET /api/policies`: the active policy set, what each rule decided, and the shadow disagreements. */
export type PoliciesResponse = z.infer<typeof policiesResponseSchema>;
