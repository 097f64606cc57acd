import {
  type AiSdkModelMessage,
  type AiSdkModelMessageParam,
  fromModelMessages,
  isJsonValue,
  type JsonValue,
  toModelMessages,
  toolResult,
  WireError,
} from '@x/wire';
import { ContinuationError } from '../errors.js';
import { fieldPath } from '../field-path.js';
import { resumeMessages } from '../resume.js';
import { createSuspension, type Suspension } from '../suspension.js';
import type {
  AiSdkResumeMessage,
  PendingToolCall,
  ResumeModelMessagesOptions,
  ToolAnswer,
} from './types.js';

interface Call {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

type Part = { type?: unknown } & Record<string, unknown>;

const partsOf = (message: AiSdkModelMessageParam | undefined): Part[] =>
  Array.isArray(message?.content) ? (message.content as Part[]) : [];

// How to keep a step to one tool call, per provider, for the not_singleton message.
const oneCallPerStep =
  'ask for one tool call per step (providerOptions: { anthropic: { disableParallelToolUse: true } } or { openai: { parallelToolCalls: false } })';

/**
 * Finds the tool call an AI SDK turn stopped on, in the whole conversation (the messages
 * you passed to `generateText` / `streamText` followed by `response.messages`): a tool call
 * with no result yet, which waits either for approval (its tool has `needsApproval`) or
 * for a client-side result (its tool has no `execute`). Provider-executed calls and
 * approvals already answered are not waiting.
 *
 * @returns undefined when nothing waits (the turn finished).
 * @throws {ContinuationError} `not_singleton` when more than one tool call waits: one
 *   suspension answers one call.
 * @example
 * const messages = [...history, ...result.response.messages];
 * const pending = pendingToolCall(messages);
 * if (pending?.kind === 'approval') console.log(`May I run ${pending.toolName}?`);
 */
export function pendingToolCall(
  messages: readonly AiSdkModelMessageParam[],
): PendingToolCall | undefined {
  const calls: Call[] = [];
  const done = new Set<string>();
  const approvals = new Map<string, string>();
  const answeredApprovals = new Set<string>();
  for (const message of messages) {
    for (const part of partsOf(message)) {
      if (part.type === 'tool-call' && part.providerExecuted !== true) {
        const call = { toolCallId: String(part.toolCallId), toolName: String(part.toolName) };
        calls.push({ ...call, input: part.input });
      } else if (part.type === 'tool-result') {
        done.add(String(part.toolCallId));
      } else if (part.type === 'tool-approval-request') {
        approvals.set(String(part.toolCallId), String(part.approvalId));
      } else if (part.type === 'tool-approval-response') {
        answeredApprovals.add(String(part.approvalId));
      }
    }
  }
  const waiting = calls.filter((call) => {
    if (done.has(call.toolCallId)) return false;
    const approvalId = approvals.get(call.toolCallId);
    return approvalId === undefined || !answeredApprovals.has(approvalId);
  });
  const [call, ...more] = waiting;
  if (call === undefined) return undefined;
  if (more.length > 0) {
    throw new ContinuationError(
      'not_singleton',
      `${waiting.length} tool calls wait (${waiting.map((c) => `"${c.toolName}"`).join(', ')}): a suspension answers one; ${oneCallPerStep}`,
      { field: 'messages' },
    );
  }
  const approvalId = approvals.get(call.toolCallId);
  const pending: PendingToolCall = {
    kind: approvalId === undefined ? 'client-tool' : 'approval',
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    input: call.input,
  };
  if (approvalId !== undefined) pending.approvalId = approvalId;
  return pending;
}

/** What {@link suspendModelMessages} needs. */
export interface SuspendModelMessagesInit {
  /** Stable id of the question; a file name in the file store. Often the tool call id. */
  interactionId: string;
  /**
   * The whole conversation: the messages passed to `generateText` / `streamText` followed
   * by `response.messages`. No system message: pass the system prompt as the `system` option.
   */
  messages: readonly AiSdkModelMessageParam[];
  sessionId?: string;
  runId?: string;
  /** Defaults to now. */
  createdAt?: Date;
  /**
   * When the question stops waiting, and its default: a denial or a client tool's output
   * (never an approval). Kept in the suspension (format version 2); `resumeModelMessages`
   * then refuses a later answer, and `expiredModelMessages` resumes with the default.
   */
  deadline?: { at: Date; answer: ToolAnswer };
}

/**
 * Builds the suspension of an AI SDK turn that stopped on a tool call waiting for approval
 * or for a client-side result ({@link pendingToolCall}). The transcript is kept in full
 * (as `@x/wire` messages, through `fromModelMessages`), so any later process can resume it
 * with {@link resumeModelMessages}. Save it with any `ContinuationStore`.
 *
 * @throws {ContinuationError} `invalid` when nothing waits, when `messages` hold a system
 *   message, or when a message cannot be converted (`field` names it); `not_singleton` when
 *   the stopped step made other tool calls too (the AI SDK already ran them).
 * @example
 * const messages = [...history, ...result.response.messages];
 * const pending = pendingToolCall(messages);
 * if (pending) await store.save(suspendModelMessages({ interactionId: pending.toolCallId, messages }));
 */
export function suspendModelMessages(init: SuspendModelMessagesInit): Suspension {
  const { interactionId } = init;
  const pending = pendingToolCall(init.messages);
  if (pending === undefined) {
    throw new ContinuationError(
      'invalid',
      'nothing to suspend: no tool call of these messages waits for approval or a client-side result',
      { field: 'messages', interactionId },
    );
  }
  const host = init.messages.findLastIndex((message) =>
    partsOf(message).some((p) => p.type === 'tool-call' && p.toolCallId === pending.toolCallId),
  );
  const siblings = partsOf(init.messages[host]).filter(
    (p) => p.type === 'tool-call' && p.providerExecuted !== true,
  );
  if (siblings.length > 1 || host !== init.messages.length - 1) {
    throw new ContinuationError(
      'not_singleton',
      `"${pending.toolName}" was called with ${Math.max(siblings.length - 1, 1)} other tool call(s) in its step, which the AI SDK already ran: a suspending tool must be the only call of its step, or its siblings would be dropped or re-run on resume; ${oneCallPerStep}`,
      { field: `messages[${host}].content`, interactionId },
    );
  }
  let converted: ReturnType<typeof fromModelMessages>;
  try {
    converted = fromModelMessages(init.messages);
  } catch (error) {
    if (!WireError.is(error)) throw error;
    throw new ContinuationError('invalid', error.message.replace(/^\[@x\/wire\] /, ''), {
      field: fieldPath(['messages', ...error.path]),
      interactionId,
      cause: error,
    });
  }
  if (converted.system !== undefined) {
    throw new ContinuationError(
      'invalid',
      "messages hold a system message: pass the system prompt as generateText's `system` option (toModelPrompt does), so every resume sends the one your code has",
      { field: 'messages', interactionId },
    );
  }
  const assistant = converted.messages.at(-1);
  if (assistant === undefined) {
    throw new ContinuationError('invalid', 'messages are empty', { field: 'messages' });
  }
  return createSuspension({
    interactionId,
    toolUseId: pending.toolCallId,
    assistant,
    messages: converted.messages,
    ...(init.sessionId === undefined ? {} : { sessionId: init.sessionId }),
    ...(init.runId === undefined ? {} : { runId: init.runId }),
    ...(init.createdAt === undefined ? {} : { createdAt: init.createdAt }),
    ...(init.deadline === undefined
      ? {}
      : {
          deadline: {
            at: init.deadline.at,
            answer: defaultRecord(
              checkDefault(init.deadline.answer, 'deadline.answer', interactionId),
            ),
          },
        }),
  });
}

function withoutSystem(messages: AiSdkModelMessage[]): AiSdkResumeMessage[] {
  return messages.flatMap((message) => (message.role === 'system' ? [] : [message]));
}

function checkAnswer(answer: unknown, interactionId: string): void {
  const candidate = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<
    string,
    unknown
  >;
  if (typeof candidate.approved === 'boolean') {
    if (candidate.reason === undefined || typeof candidate.reason === 'string') return;
  } else if ('output' in candidate && isJsonValue(candidate.output)) {
    if (candidate.isError === undefined || typeof candidate.isError === 'boolean') return;
  }
  throw new ContinuationError(
    'invalid',
    'the answer must be { approved: boolean, reason?: string } for an approval or { output: <JSON value>, isError?: boolean } for a client-side tool',
    { field: 'answer', interactionId },
  );
}

/**
 * The `messages` that resume a suspended AI SDK turn with the person's answer, for
 * `generateText` / `streamText` (with the same `tools` and `system` as before):
 *
 * - `{ approved, reason? }`: the transcript with the tool call's `tool-approval-request`,
 *   then a `tool` message with the `tool-approval-response`. The AI SDK then runs the
 *   tool's `execute` (approved) or tells the model it was denied, and carries on.
 * - `{ output, isError? }`: the transcript with a `tool-result` for the call.
 *
 * Pure, like `resumeMessages`: mark the suspension resolved once the resumed run ended.
 *
 * @throws {ContinuationError} `already_resolved` for a resolved suspension; `invalid` for a
 *   malformed answer; `expired` for an answer at or after the suspension's `deadline` (resume
 *   with {@link expiredModelMessages} instead: its default, not the late answer, applies).
 * @example
 * const suspension = await store.load(id);
 * const result = await generateText({ model, tools, system, messages: resumeModelMessages(suspension, { approved: true }) });
 * await store.markResolved(id);
 */
export function resumeModelMessages(
  suspension: Suspension,
  answer: ToolAnswer,
  options: ResumeModelMessagesOptions = {},
): AiSdkResumeMessage[] {
  const { interactionId, deadline } = suspension;
  checkAnswer(answer, interactionId);
  checkUnresolved(suspension);
  const now = options.now ?? new Date();
  if (deadline !== undefined && now.getTime() >= deadline.at.getTime()) {
    throw new ContinuationError(
      'expired',
      `interaction "${interactionId}" reached its deadline (${deadline.at.toISOString()}) before this answer: resume with expiredModelMessages, which applies its default`,
      { interactionId },
    );
  }
  return resumeWith(suspension, answer);
}

function checkUnresolved(suspension: Suspension): void {
  if (suspension.resolved) {
    const { interactionId } = suspension;
    throw new ContinuationError(
      'already_resolved',
      `interaction "${interactionId}" is already resolved: resuming it again would re-run its side effects`,
      { interactionId },
    );
  }
}

function resumeWith(suspension: Suspension, answer: ToolAnswer): AiSdkResumeMessage[] {
  const { interactionId, toolUseId } = suspension;
  if ('output' in answer) {
    const { output } = answer;
    const result = toolResult(
      toolUseId,
      typeof output === 'string' ? output : JSON.stringify(output),
      answer.isError ? { isError: true } : {},
    );
    return withoutSystem(toModelMessages(resumeMessages(suspension, result)));
  }
  const transcript = suspension.messages?.length ? suspension.messages : [suspension.assistant];
  const out = withoutSystem(toModelMessages(transcript));
  const last = out.at(-1);
  if (last?.role !== 'assistant') {
    throw new ContinuationError('invalid', 'the transcript does not end with the assistant', {
      field: 'messages',
      interactionId,
    });
  }
  // Any id pairs the two parts; the interaction id is the one both sides already know.
  const approvalId = interactionId;
  out[out.length - 1] = {
    role: 'assistant',
    content: [
      ...last.content,
      { type: 'tool-approval-request', approvalId, toolCallId: toolUseId },
    ],
  };
  out.push({
    role: 'tool',
    content: [
      {
        type: 'tool-approval-response',
        approvalId,
        approved: answer.approved,
        ...(answer.reason === undefined ? {} : { reason: answer.reason }),
      },
    ],
  });
  return out;
}

/**
 * The answer that resumes a suspended AI SDK turn whose question reached its deadline with no
 * answer: `fallback`, the deadline's default, told to the model as what it is ("No answer
 * came before the deadline (…); the default … was applied"), never as the person's decision.
 * Your code keeps the deadline (for example `suspension.createdAt` plus a wait, or an
 * `@x/askuser` pause's `deadline`, applied once by `expire`) and resumes with this once it
 * passed. A default that approves is refused: the AI SDK would run the tool, and the model
 * would never learn that nobody approved it.
 *
 * @throws {ContinuationError} `invalid` for a default that approves, or a malformed one.
 * @example
 * if (Date.now() > suspension.createdAt.getTime() + 86_400_000) {
 *   const answer = expiredAnswer(new Date(suspension.createdAt.getTime() + 86_400_000), { approved: false });
 *   await generateText({ model, tools, system, messages: resumeModelMessages(suspension, answer) });
 * }
 */
export function expiredAnswer(deadline: Date, fallback: ToolAnswer): ToolAnswer {
  checkDefault(fallback, 'fallback', '');
  const applied = `No answer came before the deadline (${deadline.toISOString()}); the default`;
  if ('approved' in fallback) {
    const reason = fallback.reason?.trim();
    return {
      approved: false,
      reason: `${applied} (deny) was applied${reason ? `: ${reason}` : '.'}`,
    };
  }
  const { output } = fallback;
  const text = typeof output === 'string' ? output : JSON.stringify(output);
  return { ...fallback, output: `${applied} was applied: ${text}` };
}

// Only the answer's own fields are kept: they are what a later process reads back.
function defaultRecord(answer: ToolAnswer): JsonValue {
  if ('approved' in answer) {
    return { approved: false, ...(answer.reason === undefined ? {} : { reason: answer.reason }) };
  }
  return {
    output: answer.output,
    ...(answer.isError === undefined ? {} : { isError: answer.isError }),
  };
}

/** `answer` as a deadline's default: a well-formed answer that does not approve. */
function checkDefault(answer: unknown, field: string, interactionId: string): ToolAnswer {
  checkAnswer(answer, interactionId);
  if ((answer as { approved?: unknown }).approved === true) {
    throw new ContinuationError(
      'invalid',
      "a deadline's default cannot approve: the tool would run and the model would read it as approved; default to a denial",
      { field, ...(interactionId === '' ? {} : { interactionId }) },
    );
  }
  return answer as ToolAnswer;
}

/**
 * The `messages` that resume a suspended AI SDK turn whose `deadline` passed with no answer:
 * the suspension's default, told to the model as what it is (through {@link expiredAnswer}:
 * "No answer came before the deadline (…); the default … was applied"). Apply it once, as you
 * would an answer: mark the suspension resolved once the resumed run ended.
 *
 * @throws {ContinuationError} `invalid` for a suspension without a deadline (`field`
 *   `deadline`), before its deadline (`deadline.at`: the person may still answer), or with a
 *   default that approves or is malformed (`deadline.answer`); `already_resolved` for a
 *   resolved suspension.
 * @example
 * const suspension = await store.load(id);
 * if (suspension.deadline && suspension.deadline.at <= new Date()) {
 *   await generateText({ model, tools, system, messages: expiredModelMessages(suspension) });
 *   await store.markResolved(id);
 * }
 */
export function expiredModelMessages(
  suspension: Suspension,
  options: ResumeModelMessagesOptions = {},
): AiSdkResumeMessage[] {
  const { interactionId, deadline } = suspension;
  if (deadline === undefined) {
    throw new ContinuationError('invalid', `interaction "${interactionId}" has no deadline`, {
      field: 'deadline',
      interactionId,
    });
  }
  checkUnresolved(suspension);
  const now = options.now ?? new Date();
  if (now.getTime() < deadline.at.getTime()) {
    throw new ContinuationError(
      'invalid',
      `interaction "${interactionId}" waits until its deadline (${deadline.at.toISOString()}): its default applies only then`,
      { field: 'deadline.at', interactionId },
    );
  }
  const fallback = checkDefault(deadline.answer, 'deadline.answer', interactionId);
  return resumeWith(suspension, expiredAnswer(deadline.at, fallback));
}
