export {
  AlreadyAnsweredError,
  answer,
  answerBatch,
  deadlineText,
  howAnswered,
  refusal,
} from './record-answer.js';
export {
  type LeasePolicy,
  leasePolicyFromEnv,
  type Resumed,
  type ResumeOptions,
} from './resume.js';
export {
  OPEN_RUN_STATUSES,
  retryRun,
  type StartOptions,
  type Stopped,
  startRun,
  stopConversation,
  stopKnownConversation,
} from './start.js';
export { messageText, runMessages, runOf } from './story.js';
export {
  type ModelFor,
  type ResumeContext,
  type RunResult,
  type SuspendedTurn,
  suspend,
} from './suspend.js';
export {
  type ExecutiveTelemetry,
  type RunEnding,
  watching,
} from './telemetry.js';
export { DEFAULT_GRACE_MS, resumeNext, type WakeOptions, wake } from './wake-loop.js';
