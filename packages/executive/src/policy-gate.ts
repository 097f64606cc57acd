import { randomUUID } from 'node:crypto';
import type { Decision, DecisionInput, PolicySet, ShortForm, ToolDefinition } from '@x/policy';
import { type ToolResultBlock, type ToolUseBlock, toolResult } from '@x/wire';
import { ExecutiveError } from './errors.js';
import {
  type EffectLog,
  type GatedTools,
  gatedArguments,
  gatedInputSchema,
  isGatedTool,
  runGatedTool,
} from './gated-tools.js';
import {
  argumentsDigest,
  type DecisionRecord,
  type Prior,
  priorOf,
  recordDecision,
  type ShadowOutcome,
} from './policy-decisions.js';
import { coveringGrant, grantText } from './policy-grants.js';
import { shadowOutcome } from './policy-shadow.js';
import type { ReloadingPolicies } from './policy-versions.js';
import type { QuestionPolicy, QuestionRules } from './question-policy.js';
import type { ExecutiveStorage } from './storage.js';
import { humanToolSpecs } from './tools.js';

/** A decision that asks a person. */
export type AskDecision = Extract<Decision, { outcome: 'ask' }>;

/**
 * What a policy gate made of one call: a question to ask (with the candidate set's outcome,
 * which the transaction that asks records beside it), or the tool result the turn goes on with.
 */
export type GateVerdict =
  | { ask: AskDecision; shadow?: ShadowOutcome | null }
  | { result: ToolResultBlock };

/** The set a gate's policies decide with now (the newest loaded version's, when they follow them). */
export function currentPolicies(policies: PolicySet | ReloadingPolicies): PolicySet {
  return 'follow' in policies ? policies.policies : policies;
}

/**
 * Decides one waiting call of a turn (a gated tool's or a human tool's) before it waits;
 * `position` is where the call stands in the run's transcript (the number of messages before
 * the assistant message that made it), by which a turn run again after a crash finds the
 * same call's decision and result.
 */
export type PolicyGate = (use: ToolUseBlock, position?: number) => Promise<GateVerdict>;

/**
 * The tools a policy set decides on for a turn: `ask_user`, `approve` and each gated tool,
 * with the JSON schema of its arguments; pass them as `tools` to `loadPolicySet` of `@x/policy`.
 */
export function policyToolsOf(gated: GatedTools = {}): ToolDefinition[] {
  return [
    ...humanToolSpecs.map(({ name, inputSchema }) => ({ name, inputSchema })),
    ...Object.keys(gated).map((name) => ({ name, inputSchema: gatedInputSchema(gated, name) })),
  ];
}

/**
 * The short form as a turn's tools need it: a gated call asks an `approve` question, so what
 * the pairs say of `approve` holds for each gated tool too, unless a pair names the tool itself;
 * a pair naming a tool the turn does not offer is left out, as it never applied to anything.
 */
export function shortFormForGated(short: ShortForm, gated: GatedTools = {}): ShortForm {
  const offered = new Set(policyToolsOf(gated).map((tool) => tool.name));
  const spread = <V>(pairs: Readonly<Record<string, V>> | undefined) => {
    if (pairs === undefined) return undefined;
    const approve = pairs.approve;
    const added = Object.keys(gated).filter((tool) => !Object.hasOwn(pairs, tool));
    return Object.fromEntries([
      ...Object.entries(pairs).filter(([tool]) => offered.has(tool)),
      ...(approve === undefined ? [] : added.map((tool) => [tool, approve] as const)),
    ]) as Record<string, V>;
  };
  const barred = new Set(
    [...(short.requesterMayNotApprove ?? [])].filter((tool) => tool === '*' || offered.has(tool)),
  );
  if (barred.has('approve')) for (const tool of Object.keys(gated)) barred.add(tool);
  const pairs = {
    audience: spread(short.audience),
    deadline: spread(short.deadline),
    remind: spread(short.remind),
    escalate: spread(short.escalate),
    quorum: spread(short.quorum),
  };
  return {
    ...Object.fromEntries(Object.entries(pairs).filter(([, given]) => given !== undefined)),
    ...(short.requesterMayNotApprove ? { requesterMayNotApprove: [...barred] } : {}),
  };
}

/** The question rules an asking decision sets (audience, deadline, quorum, ...). */
export function questionRulesOf(decision: AskDecision): QuestionRules {
  const { audience, quorum, deadline, remindMs, escalate, requesterMayNotAnswer } = decision.ask;
  return {
    ...(audience.roles.length > 0 ? { audience: audience.roles } : {}),
    ...(audience.names.length > 0 ? { audienceNames: audience.names } : {}),
    ...(requesterMayNotAnswer ? { requesterMayNotApprove: true } : {}),
    ...(deadline ? { deadline: { ms: deadline.ms, answer: { ...deadline.answer } } } : {}),
    ...(remindMs ? { remindMs } : {}),
    ...(escalate ? { escalate } : {}),
    ...(quorum ? { quorum } : {}),
  };
}

// A question whose call is not known here (a worker's, a framework's) is decided as its kind
// with the least arguments its schema takes.
const KIND_INPUT: Readonly<Record<string, unknown>> = {
  ask_user: { question: '?' },
  approve: { action: '?' },
};

/**
 * The {@link QuestionPolicy} of a policy set, for the flows that know only a question's kind
 * (a worker's question, a framework's interrupt): each kind is decided on its own, with no
 * requester, and an asking decision's settings are the rules; anything else sets none. The
 * turn loop decides each call itself (`policies` of `turnKind`), with its arguments.
 */
export function questionPolicyOf(policies: PolicySet | ReloadingPolicies): QuestionPolicy {
  return (kind) => {
    const decision = currentPolicies(policies).decide({
      tool: kind,
      input: KIND_INPUT[kind] ?? {},
      requester: null,
      run: { id: '', conversation: '', kind: 'question' },
    });
    return decision.outcome === 'ask' ? questionRulesOf(decision) : {};
  };
}

/** What {@link policyGate} decides with and where it records. */
export interface PolicyGateOptions {
  /** The active set, or the loaded versions it follows (see `ReloadingPolicies`). */
  policies: PolicySet | ReloadingPolicies;
  /**
   * A candidate set run beside the active one: its outcome of every decision is recorded with
   * it (`shadow` of the record), with no effect; see `shadowDisagreements`. Default none.
   */
  shadow?: PolicySet;
  storage: ExecutiveStorage;
  run: { runId: string; conversationId: string };
  /** For whom the run acts (the policies' principal), if anyone. */
  requester?: string | undefined;
  gated: GatedTools;
  /** Where an allowed gated call's effect lands, by its key. */
  effects: EffectLog;
  /**
   * How long the same call (tool and arguments) in the conversation, once declined or expired,
   * is denied again without asking, in ms after that answer; default 60,000; 0: never.
   */
  denialWindowMs?: number;
  /** The most questions the policies ask in one run; past it the run fails; default no limit. */
  maxQuestions?: number;
}

/** The tool result the model reads for a denied call: the policy's reason; the call did not run. */
export function deniedResult(use: ToolUseBlock, reason: string): ToolResultBlock {
  return toolResult(use.id, `Denied by policy (${use.name} was not run): ${reason}`);
}

/**
 * A gate that decides every waiting call of a turn through `policies`: allow runs a gated call
 * with no person (`policy:<run>:<position>:<tool>:<arguments digest>` its idempotency key) and records its result and the
 * decision in one transaction, or answers an `approve` call as approved; deny records the
 * decision and gives the model the reason; ask returns the decision, which the transaction
 * that asks the question records. An `ask_user` call needs an answer, so allowing one asks.
 */
export function policyGate(options: PolicyGateOptions): PolicyGate {
  const { policies, storage, run, requester, gated } = options;
  return async (use, position) => {
    const call = {
      ...run,
      tool: use.name,
      position: position ?? null,
      argumentsDigest: argumentsDigest(use.input),
    };
    // Sent before Cedar decides, so that the read overlaps the evaluation.
    const prior = priorOf(storage.db, call);
    prior.catch(() => {});
    const input: DecisionInput = {
      tool: use.name,
      input: use.input,
      requester: requester === undefined ? null : { name: requester },
      run: { id: run.runId, conversation: run.conversationId, kind: 'turn' },
    };
    let decided = currentPolicies(policies).decide(input);
    // Following loaded versions: the read sent above names the newest; a change decides again.
    if ('follow' in policies && (await policies.follow(storage.db, (await prior).newestVersion))) {
      decided = policies.policies.decide(input);
    }
    const shadow = options.shadow ? shadowOutcome(options.shadow, input) : null;
    const record = {
      id: randomUUID(),
      ...run,
      tool: use.name,
      toolCallId: use.id,
      position: call.position,
      argumentsDigest: call.argumentsDigest,
      arguments: use.input,
      requester: requester ?? null,
      reason: decided.reason,
      ruleIds: decided.ruleIds,
      policyHash: decided.policyHash,
      error: null,
      token: null,
      shadow,
    } satisfies Omit<DecisionRecord, 'decidedAt' | 'outcome'>;
    // The same call at the same place, decided before a crash, keeps that decision, recorded once.
    const before = (await prior).decided;
    if (before?.outcome === 'deny') return { result: deniedResult(use, before.reason) };
    if (before?.outcome === 'allow' && !isGatedTool(gated, use.name)) {
      return { result: toolResult(use.id, `Approved by policy: ${before.reason}`) };
    }
    const decision = await narrowed(options, use, decided, record, prior);
    if (decision.outcome === 'ask') return { ask: decision, shadow };
    if (decision.outcome === 'deny') {
      const denied = { ...record, outcome: 'deny' as const, reason: decision.reason };
      await storage.transaction((tx) => recordDecision(tx, storage, denied));
      return { result: deniedResult(use, decision.reason) };
    }
    const allowed = { ...record, outcome: 'allow' as const, reason: decision.reason };
    if (!isGatedTool(gated, use.name)) {
      await storage.transaction((tx) => recordDecision(tx, storage, allowed));
      return { result: toolResult(use.id, `Approved by policy: ${decision.reason}`) };
    }
    return { result: await runAllowed(options, use, allowed) };
  };
}

/**
 * What the run's own state makes of an asking decision: a call declined or expired within the
 * denial window is denied again; a pre-approved scope allows it (never an `ask_user`, which
 * needs an answer); past the question cap the run fails. An `ask_user` call needs an
 * answer, so an allow of one asks anyone.
 */
async function narrowed(
  options: PolicyGateOptions,
  use: ToolUseBlock,
  decided: Decision,
  record: Pick<DecisionRecord, 'runId'>,
  priorRead: Promise<Prior>,
): Promise<Decision> {
  const decision: Decision =
    decided.outcome === 'allow' && use.name === 'ask_user'
      ? { ...decided, outcome: 'ask', ask: ANYONE, error: null }
      : decided;
  if (decision.outcome !== 'ask') return decision;
  const { storage } = options;
  const prior = await priorRead;
  const declined = await declinedWithin(
    storage,
    prior.askedTokens,
    options.denialWindowMs ?? 60_000,
  );
  if (declined) return { ...decision, outcome: 'deny', reason: declined };
  if (use.name !== 'ask_user') {
    const grant = coveringGrant(prior.grants, use.name, use.input);
    if (grant) {
      const reason = `pre-approved at exec (${grantText(grant)}), where ${decision.reason}`;
      return {
        outcome: 'allow',
        reason,
        ruleIds: decision.ruleIds,
        policyHash: decision.policyHash,
      };
    }
  }
  const cap = options.maxQuestions;
  if (cap !== undefined && prior.questionsAsked >= cap) {
    const asked = prior.questionsAsked;
    throw new ExecutiveError(
      'limit_reached',
      `run ${record.runId} asked ${asked} questions, the most one run may ask (${cap}): it fails rather than ask again`,
      { runId: record.runId },
    );
  }
  return decision;
}

/** Why the same call is denied again: its question was declined or expired within the window. */
async function declinedWithin(
  storage: ExecutiveStorage,
  askedTokens: readonly string[],
  windowMs: number,
): Promise<string | undefined> {
  if (windowMs <= 0) return undefined;
  const since = Date.now() - windowMs;
  for (const token of askedTokens) {
    const answered = await storage.pauses().getAnswer(token);
    if (!answered) continue;
    const at = answered.expiredAt ?? answered.resumedAt;
    // A cancel (a person's, or a stopped conversation's) ends the turn; it refuses nothing.
    const refused = answered.answer.action === 'decline';
    if (refused && at.getTime() >= since) {
      const how = answered.expiredAt ? 'expired unanswered' : 'was declined';
      const until = new Date(at.getTime() + windowMs).toISOString();
      return `the same call ${how} at ${at.toISOString()}; it is denied without asking until ${until}`;
    }
  }
  return undefined;
}

const ANYONE: AskDecision['ask'] = {
  audience: { names: [], roles: [] },
  quorum: null,
  deadline: null,
  remindMs: null,
  escalate: null,
  requesterMayNotAnswer: false,
  severity: null,
};

/**
 * Runs an allowed gated call once: a result recorded under its key stands; else the tool runs
 * with the key and its result is recorded with the decision in one transaction. A crash between
 * the two runs it again with the same key, as an approved call's resume does: the key names the
 * call's position, tool and arguments, which a turn run again keeps, not the model's call id.
 */
async function runAllowed(
  { storage, gated, effects }: PolicyGateOptions,
  use: ToolUseBlock,
  record: Omit<DecisionRecord, 'decidedAt'>,
): Promise<ToolResultBlock> {
  const key =
    record.position === null
      ? `policy:${record.runId}:${use.id}`
      : `policy:${record.runId}:${record.position}:${use.name}:${record.argumentsDigest}`;
  const recorded = await storage.gatedResults().result(key);
  if (recorded) return toolResult(use.id, recorded.result);
  const checked = gatedArguments(gated, use.name, use.input);
  if ('error' in checked) {
    const reason = `the arguments do not match the tool's schema: ${checked.error}`;
    await storage.transaction((tx) =>
      recordDecision(tx, storage, { ...record, outcome: 'deny', reason, ruleIds: [] }),
    );
    return deniedResult(use, reason);
  }
  const output = await runGatedTool(gated, use.name, checked.arguments, { key, effects });
  const stands = await storage.transaction(async (tx) => {
    const result = storage.gatedResults(tx).record({
      token: key,
      tool: use.name,
      arguments: checked.arguments,
      edited: false,
      result: output,
    });
    await Promise.all([
      result,
      recordDecision(tx, storage, { ...record, arguments: checked.arguments }),
    ]);
    return result;
  });
  return toolResult(use.id, stands.result);
}

/** The question policy a suspended turn asks under: its decision's settings when a gate decided. */
export function askedUnder(
  decision: AskDecision | undefined,
  policy: QuestionPolicy,
): QuestionPolicy {
  if (decision === undefined) return policy;
  const rules = questionRulesOf(decision);
  return () => rules;
}
