/**
 * @packageDocumentation
 * `@x/executive`: the unattended executive, being extracted from the runner (issue 47). It
 * holds the turn loop ({@link runTurn}) with its model port, the human tools (`ask_user`,
 * `approve`), the gated-tool mechanism ({@link gatedCallResult}) and the delegate port, and
 * {@link ExecutiveError}, the one error its flows throw; the policies the flows take as options
 * ({@link QuestionPolicy}, {@link LeasePolicy}) and the port they announce events through
 * ({@link ExecutiveEvents}), and what watches them ({@link ExecutiveTelemetry},
 * {@link ExecutiveTracer}).
 */

// The policy types the executive's options and the approval center's name, for those that do not import @x/policy.
export type { Outcome as PolicyOutcome, PolicySet, Rule as PolicyRule } from '@x/policy';
export { durationMs } from '@x/policy';
export {
  type AnsweredBatch,
  type AnswerFlowOptions,
  answer,
  answerBatch,
  answerRefusal,
  quorumText,
} from './answer.js';
export { decisionOfQuestion } from './decision-of-question.js';
export type { DelegateHandler, Delegation, Worker, WorkerQuestion } from './delegate-port.js';
export {
  allFinished,
  answerWorker,
  delegateResult,
  newDelegation,
  runDelegate,
  runWorkers,
  unsettledWorkers,
  WORKER_SYSTEM_PROMPT,
  type WorkerOptions,
  waitingWorkers,
} from './delegation.js';
export { getDelegation, putDelegation } from './delegation-checkpoint.js';
export {
  ExecutiveError,
  type ExecutiveErrorCode,
  type ExecutiveErrorOptions,
  withoutOrigin,
} from './errors.js';
export {
  EVENT_KINDS,
  type EventKind,
  type ExecutiveEvent,
  type ExecutiveEvents,
  type QuestionFacts,
  type QuestionFields,
  questionEvent,
  runEvent,
} from './events.js';
export {
  type Claim,
  claimOf,
  createExecutive,
  type Executive,
  type ExecutiveOptions,
  type WorkOptions,
  writtenByNewer,
} from './executive.js';
export type { FlowContext } from './flow.js';
export {
  type GatedCallOptions,
  type GatedResult,
  type GatedResults,
  gatedCallResult,
} from './gated-call.js';
export { PostgresGatedResults } from './gated-results.js';
export {
  acceptedArguments,
  type EffectLog,
  type GatedContext,
  type GatedTool,
  type GatedTools,
  gatedInputSchema,
  isGatedTool,
} from './gated-tools.js';
export type { LeasePolicy } from './lease-policy.js';
export { MIGRATIONS_SCHEMA, MIGRATIONS_TABLE, migrate } from './migrate.js';
export type { Model, ModelRequest, ModelRetry, ModelUsage, ToolSpec } from './model-port.js';
export { type EventRouting, outboxEvents } from './outbox-events.js';
export { decisionCountsSince, type RuleDecisionCounts } from './policy-decision-counts.js';
export {
  type AnsweredDecision,
  argumentsDigest,
  type DecisionAnswer,
  type DecisionRecord,
  type DecisionView,
  decisionsOf,
  decisionsSince,
  decisionView,
  POLICY_AUDIT_CHAIN,
  type Prior,
  priorOf,
  recordedDecisionOf,
  type ShadowOutcome,
} from './policy-decisions.js';
export {
  type AskDecision,
  currentPolicies,
  deniedResult,
  type GateVerdict,
  type PolicyGate,
  type PolicyGateOptions,
  policyGate,
  policyToolsOf,
  questionPolicyOf,
  questionRulesOf,
  shortFormForGated,
} from './policy-gate.js';
export {
  coveringGrant,
  type Grant,
  grantScopes,
  grantsOf,
  grantsProblem,
  grantText,
  MAX_GRANT_LENGTH,
  MAX_GRANTS,
} from './policy-grants.js';
export {
  type ShadowDisagreement,
  type ShadowDisagreementsOptions,
  shadowDisagreements,
  shadowOutcome,
} from './policy-shadow.js';
export {
  type PolicyVersion,
  policyVersionOf,
  policyVersions,
  ReloadingPolicies,
  type ReloadingPoliciesOptions,
  recordPolicyVersion,
} from './policy-versions.js';
export {
  deadlineFor,
  NO_QUESTION_POLICY,
  type QuestionAnswerers,
  type QuestionDeadline,
  type QuestionPolicy,
  type QuestionRules,
  type QuestionTimes,
  questionAnswerers,
  questionAudience,
  questionTimes,
} from './question-policy.js';
export {
  applyDue,
  cancelRun,
  finishTurn,
  recordFailure,
  recordGatedResult,
  saveSettled,
  waitAgain,
} from './resume-writes.js';
export {
  CHANGED_APPROVAL_PREFIX,
  type DueRun,
  isChangedApproval,
  kindStopOf,
  type ResumingRun,
  type RunKind,
  runKindOf,
  saveKindStop,
  TURN_KIND,
} from './run-kind.js';
export { messageText, runMessages, runOf } from './run-story.js';
export {
  lockFor,
  lockForStatement,
  type SqlExecutiveStorageOptions,
  sqlExecutiveStorage,
} from './sql-storage.js';
export {
  OPEN_RUN_STATUSES,
  type OpenWork,
  openWork,
  recordStart,
  retry,
  type Stopped,
  stop,
} from './start.js';
export type { ExecutiveDatabase, ExecutiveStorage } from './storage.js';
export {
  answersOf,
  delegatedResult,
  isDelegation,
  loadDelegation,
  readDelegation,
  type StoredDelegation,
  saveDelegation,
  suspendDelegation,
} from './stored-delegation.js';
export {
  type DelegatedTurn,
  type ModelFor,
  type Reminded,
  type ResumeContext,
  type RunIds,
  type RunResult,
  requesterOf,
  type SuspendedTurn,
  suspend,
  suspendNewRun,
  type WorkerQuestionInfo,
} from './suspend.js';
export type {
  ExecutiveTelemetry,
  ExecutiveTracer,
  HumanWait,
  RunEnding,
  TurnSpan,
} from './telemetry.js';
export {
  answerResult,
  DELEGATE_TOOL,
  DelegateInputSchema,
  declinedResult,
  declineIn,
  expiredResult,
  HUMAN_TOOLS,
  type HumanAnswer,
  type HumanToolName,
  humanToolSpecs,
  isHumanTool,
  MAX_MODEL_DEADLINE_MS,
  type ModelAudience,
  type OrdinaryTool,
  type OrdinaryTools,
  type Question,
  questionKindOf,
  questionOf,
  type ToolContext,
  toolSpecsOf,
} from './tools.js';
export { runTurn, type TurnObserver, type TurnOptions, type TurnOutcome } from './turn.js';
export { type TurnKindOptions, turnKind } from './turn-kind.js';
export {
  storedTraceparent,
  tracedTools,
  tracedTurn,
  traceWait,
  type Watching,
  watchedModel,
} from './watching.js';
