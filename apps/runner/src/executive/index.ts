/**
 * The unattended executive: start a run, suspend it on a question, answer it, resume it.
 *
 * Approval-gated tools (`send_email`, `transfer_funds`): a call pauses the run as an approval
 * question; on accept, the resume (`turnKind` of `@x/executive`) invokes the tool with the
 * question's token as its idempotency key and records its result (`@x/executive`'s gated
 * results, fenced by the lease) before the model sees it. A crash between the invocation and the record invokes it again with the
 * same key: at-least-once invocation with a stable key, so a tool that deduplicates by key has
 * exactly one effect per approval. An accepting answer's content is empty (run as asked) or
 * the edited arguments as JSON, checked against the tool's schema when the answer is taken.
 * @module
 */

export type { ModelFor, ResumeContext, RunResult, SuspendedTurn } from '@x/executive';
export {
  messageText,
  OPEN_RUN_STATUSES,
  quorumText,
  runMessages,
  runOf,
  type Stopped,
} from '@x/executive';
export { answerContentProblem, MAX_ANSWER_CHARS, MAX_ANSWER_TEXT } from './answer-limit.js';
export {
  AlreadyAnsweredError,
  answer,
  answerBatch,
  checkAnswerSize,
  deadlineText,
  howAnswered,
  noQuestionWith,
  refusal,
  refuseAnswerer,
} from './record-answer.js';
export type { Resumed, ResumeOptions } from './resume.js';
export {
  compileRunnerPolicies,
  retryRun,
  runnerPolicies,
  runnerPolicyVersions,
  runnerShadowPolicies,
  type StartOptions,
  startRun,
  stopConversation,
  stopKnownConversation,
} from './start.js';
export { suspend, suspendNewRun } from './suspend.js';
export { watching } from './telemetry.js';
export { DEFAULT_GRACE_MS, resumeNext, type WakeOptions, wake } from './wake-loop.js';
