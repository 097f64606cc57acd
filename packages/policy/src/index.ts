/**
 * @packageDocumentation
 * `@x/policy`: who approves what, as code. Cedar rules, validated against a schema generated
 * from the tool definitions ({@link loadPolicySet}), decide for each gated tool call and each
 * question: allow (with the reason and rules), deny (with the reason for the model), or ask,
 * with the audience, quorum, deadline, reminder, escalation, separation of duties and
 * severity their annotations say ({@link PolicySet.decide}). The runner's six variables
 * compile into rules of the same set ({@link compileShortForm}). No storage: decisions are
 * plain values carrying the set's hash.
 */
export {
  type AskSettings,
  type Audience,
  type Decision,
  type DefaultAnswer,
  type Outcome,
  SEVERITIES,
  type Severity,
} from './decision.js';
export { durationMs } from './duration.js';
export {
  PolicyError,
  type PolicyErrorCode,
  type PolicyErrorOptions,
  type PolicySourceLocation,
} from './errors.js';
export type { LoadPolicySetOptions, PolicySource } from './load.js';
export {
  type PolicyFixture,
  type PolicyFixtureResult,
  parsePolicyFixtures,
  readPolicyFixtures,
  runPolicyFixtures,
} from './policy-fixtures.js';
export { type DecisionInput, deferPolicySet, loadPolicySet, PolicySet } from './policy-set.js';
export {
  type RecordedAnswer,
  type RecordedDecision,
  type ReplayChange,
  type ReplaySummary,
  replayDecisions,
} from './replay.js';
export type { Rule } from './rule.js';
export { compileShortForm, type ShortForm } from './short-form.js';
export { readPolicySources } from './sources.js';
export type { ToolDefinition } from './tool-schema-set.js';
