import type { AiSdkModelMessage, JsonValue } from '@x/wire';

// Structural copies of the Vercel AI SDK (ai@6) shapes the bridge writes: `@x/continuation`
// has no runtime dependency on `ai`. A type test checks they are assignable to `ModelMessage`.

type PartOf<Role extends AiSdkModelMessage['role']> =
  Extract<AiSdkModelMessage, { role: Role }>['content'] extends Array<infer Part> ? Part : never;

/** The AI SDK's record that a tool call waits for approval (in the assistant message). */
export interface AiSdkToolApprovalRequestPart {
  type: 'tool-approval-request';
  approvalId: string;
  toolCallId: string;
}

/** A person's decision on an approval request (in a `role: 'tool'` message). */
export interface AiSdkToolApprovalResponsePart {
  type: 'tool-approval-response';
  approvalId: string;
  approved: boolean;
  reason?: string;
}

/**
 * A message {@link resumeModelMessages} writes; an array of them is `generateText` /
 * `streamText`'s `messages` as it is.
 */
export type AiSdkResumeMessage =
  | Extract<AiSdkModelMessage, { role: 'user' }>
  | { role: 'assistant'; content: Array<PartOf<'assistant'> | AiSdkToolApprovalRequestPart> }
  | { role: 'tool'; content: Array<PartOf<'tool'> | AiSdkToolApprovalResponsePart> };

/**
 * The tool call an AI SDK step stopped on.
 * - `approval`: a tool with `needsApproval`; the answer is `{ approved, reason? }`, and on
 *   approval the AI SDK runs the tool's `execute` when the turn resumes.
 * - `client-tool`: a tool without `execute`; the answer is its `output`.
 */
export interface PendingToolCall {
  kind: 'approval' | 'client-tool';
  toolCallId: string;
  toolName: string;
  input: unknown;
  /** The AI SDK's approval id (kind `approval` only). */
  approvalId?: string;
}

/** The answer to a tool call waiting for approval. */
export interface ToolApprovalAnswer {
  approved: boolean;
  /** Shown to the model in the `execution-denied` result when not approved. */
  reason?: string;
}

/** The result of a client-side tool (one without `execute`). */
export interface ToolOutputAnswer {
  /** A string is the result's text; any other JSON value is sent as its JSON text. */
  output: JsonValue;
  /** The tool failed: the result is flagged as an error. Default false. */
  isError?: boolean;
}

/** What resumes a suspended AI SDK turn: an approval decision or a client tool's output. */
export type ToolAnswer = ToolApprovalAnswer | ToolOutputAnswer;

/** Options of `resumeModelMessages` and `expiredModelMessages`. */
export interface ResumeModelMessagesOptions {
  /** The time the answer (or the deadline's default) is applied at; defaults to now. */
  now?: Date;
}
