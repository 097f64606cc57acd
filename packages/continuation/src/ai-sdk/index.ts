/**
 * @packageDocumentation
 * `@x/continuation/ai-sdk`: suspends a Vercel AI SDK (ai@6) turn that stopped on a tool
 * waiting for approval (`needsApproval`) or on a client-side tool (no `execute`), and
 * resumes `generateText` / `streamText` with the tool-approval-response or tool-result.
 */
export {
  expiredAnswer,
  expiredModelMessages,
  pendingToolCall,
  resumeModelMessages,
  type SuspendModelMessagesInit,
  suspendModelMessages,
} from './bridge.js';
export type {
  AiSdkResumeMessage,
  AiSdkToolApprovalRequestPart,
  AiSdkToolApprovalResponsePart,
  PendingToolCall,
  ResumeModelMessagesOptions,
  ToolAnswer,
  ToolApprovalAnswer,
  ToolOutputAnswer,
} from './types.js';
