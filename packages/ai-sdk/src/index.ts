/**
 * @packageDocumentation
 * `@x/ai-sdk`: the Vercel AI SDK on the approval plane. A `needsApproval` tool call of a
 * `generateText` loop ({@link startAiSdkRun}) becomes a durable question, its conversation
 * is kept server-side as the run's continuation, and the worker resumes the loop exactly once
 * ({@link aiSdkKind}).
 */

export {
  AI_SDK_KIND,
  type AiSdkKindOptions,
  type AiSdkRunOptions,
  type AiSdkTurnSettings,
  aiSdkKind,
  startAiSdkRun,
} from './kind.js';
