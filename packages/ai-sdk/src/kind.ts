import type { Suspension } from '@x/continuation';
import {
  expiredAnswer,
  type PendingToolCall,
  pendingToolCall,
  resumeModelMessages,
  suspendModelMessages,
  type ToolAnswer,
  type ToolApprovalAnswer,
} from '@x/continuation/ai-sdk';
import {
  answerResult,
  cancelRun,
  type FlowContext,
  finishTurn,
  isChangedApproval,
  NO_QUESTION_POLICY,
  type QuestionPolicy,
  type ResumingRun,
  type RunIds,
  type RunKind,
  type RunResult,
  type SuspendedTurn,
  suspendNewRun,
} from '@x/executive';
import { fromModelMessages, type Message } from '@x/wire';
import { generateText, type LanguageModel, type ModelMessage, type ToolSet } from 'ai';

/** The run kind of an AI SDK `generateText` loop stopped on a tool approval (its `meta.kind`). */
export const AI_SDK_KIND = 'ai-sdk turn';

/**
 * What every `generateText` call of a run is made with (the model, `tools`, `system`,
 * `stopWhen`, `providerOptions`, ...): all of its options but the conversation, which the
 * run keeps, and the abort signal, which the worker's lease owns.
 */
export type AiSdkTurnSettings<TOOLS extends ToolSet = ToolSet> = Omit<
  Parameters<typeof generateText<TOOLS>>[0],
  'messages' | 'prompt' | 'abortSignal'
>;

/** How the questions of a run are governed, and what aborts its first model call. */
export interface AiSdkRunOptions {
  /** Who may answer its questions, their deadlines and defaults. */
  policy?: QuestionPolicy;
  /** Aborts the model call in flight. */
  signal?: AbortSignal;
}

/** What the kind resumes runs with: the same settings they were started with, and the policy. */
export interface AiSdkKindOptions<TOOLS extends ToolSet = ToolSet> {
  /** The `generateText` settings of the run's turns: the same tools and system prompt. */
  settings: AiSdkTurnSettings<TOOLS>;
  /** Who may answer the questions of a later approval. */
  policy?: QuestionPolicy;
}

/** The model's id as the run's questions record it. */
function modelIdOf(model: LanguageModel): string {
  return typeof model === 'string' ? model : model.modelId;
}

/** An error the worker does not retry: the run cannot be resumed as stored. */
function refused(why: string): Error {
  return Object.assign(new Error(`[@x/ai-sdk] ${why}; it is not resumed`), { retryable: false });
}

/**
 * How a conversation stands once `generateText` returned: completed, or stopped on the one
 * tool call that waits for approval (as the executive's suspended turn, through the bridge's
 * conversion of `@x/continuation/ai-sdk`).
 */
function outcomeOf(
  conversation: ModelMessage[],
): { status: 'completed'; messages: Message[] } | SuspendedTurn {
  const pending = pendingToolCall(conversation);
  if (pending === undefined) {
    return { status: 'completed', messages: fromModelMessages(conversation).messages };
  }
  const suspension = suspendModelMessages({
    interactionId: pending.toolCallId,
    messages: conversation,
  });
  const messages = suspension.messages ?? [];
  const { assistant } = suspension;
  if (assistant.role !== 'assistant')
    throw refused('its conversation does not end with the assistant');
  const toolUse = {
    type: 'tool_use' as const,
    id: pending.toolCallId,
    name: pending.toolName,
    input: suspension.toolInput ?? null,
  };
  return {
    status: 'suspended',
    messages: messages.slice(0, -1),
    assistant,
    toolUse,
    question: {
      kind: pending.kind === 'approval' ? 'approve' : 'ask_user',
      question: questionText(pending),
      options: null,
      priority: 0,
      // The AI SDK runs an approved call with the arguments the model gave, never edited ones.
      ...(pending.kind === 'approval' ? { fixedArguments: true as const } : {}),
    },
  };
}

/**
 * What the person is asked: whether the tool may run with its arguments, or, for a client-side
 * tool, its input's `question` when it has one, else the tool and its input.
 */
function questionText({ kind, toolName, input }: PendingToolCall): string {
  const shown = JSON.stringify(input ?? {});
  if (kind === 'approval') return `Allow the agent to call ${toolName} with ${shown}?`;
  const asked = (input as { question?: unknown } | null)?.question;
  return typeof asked === 'string' ? asked : `${toolName} ${shown}`;
}

/** Whether `tools` offer `name` as a client-side tool (no `execute`: the person answers it). */
function isClientSide(tools: ToolSet | undefined, name: string | undefined): boolean {
  const tool = name === undefined ? undefined : tools?.[name];
  return tool !== undefined && typeof tool.execute !== 'function';
}

/**
 * The person's answer as a client-side tool's output: their text, or that they declined; past
 * the question's deadline, its default told to the model as what it is.
 */
function outputOf(
  answer: ResumingRun['answer'],
  expiredAt: Date | null,
  toolUseId: string,
): ToolAnswer {
  const given = { action: answer.action, content: answer.content ?? '' };
  const result = answerResult(toolUseId, given);
  const output = typeof result.content === 'string' ? result.content : given.content;
  return expiredAt ? expiredAnswer(expiredAt, { output }) : { output };
}

/**
 * Runs one `generateText` loop of `settings` on `messages` as a new run of the kind
 * {@link AI_SDK_KIND}: when it stops on a `needsApproval` tool call, the run waits on one
 * `approve` question (on a client-side tool, one without `execute`: an `ask_user` question
 * whose answer becomes the tool's output), its whole conversation kept server-side as the
 * run's continuation; when it finishes, nothing is recorded and the result is `completed`
 * with the transcript.
 *
 * @throws `ContinuationError` (`@x/continuation`) `not_singleton` when the loop stops on
 *   several calls of one step, `invalid` when `messages` hold a system message.
 * @example
 * const started = await startAiSdkRun(flow, { runId: 'r1', conversationId: 'c1' }, settings, [
 *   { role: 'user', content: 'Pay 10' },
 * ]);
 * if (started.status === 'waiting') console.log(started.question);
 */
export async function startAiSdkRun<TOOLS extends ToolSet>(
  flow: FlowContext,
  ids: RunIds,
  settings: AiSdkTurnSettings<TOOLS>,
  messages: ModelMessage[],
  options: AiSdkRunOptions = {},
): Promise<RunResult> {
  const call = { ...settings, messages } as Parameters<typeof generateText<TOOLS>>[0];
  const result = await generateText(
    options.signal ? { ...call, abortSignal: options.signal } : call,
  );
  const outcome = outcomeOf([...messages, ...result.response.messages]);
  if (outcome.status === 'completed') {
    const { runId, conversationId } = ids;
    return { status: 'completed', runId, conversationId, messages: outcome.messages };
  }
  const { requester } = ids;
  const meta = { kind: AI_SDK_KIND, ...(requester === undefined ? {} : { requester }) };
  const model = { id: modelIdOf(settings.model) };
  return suspendNewRun(flow, ids, model, outcome, meta, crypto.randomUUID(), options.policy);
}

/**
 * The person's answer as the AI SDK's approval decision: approved on accept; otherwise
 * denied with their reason, or, past the question's deadline, with the deadline's default
 * told to the model as what it is.
 */
function approvalOf(answer: ResumingRun['answer'], expiredAt: Date | null): ToolApprovalAnswer {
  const reason = answer.content?.trim() ? answer.content : undefined;
  if (expiredAt) {
    if (answer.action === 'accept') {
      throw refused("its question's deadline default approves, and a default never approves");
    }
    return expiredAnswer(expiredAt, {
      approved: false,
      ...(reason ? { reason } : {}),
    }) as ToolApprovalAnswer;
  }
  if (answer.action === 'accept' && isChangedApproval(reason)) {
    // The AI SDK cannot run a call with other arguments: the changes are told, never dropped.
    return {
      approved: false,
      reason: `A person approved this call with changes, which cannot be applied to its arguments, so it was not run (${reason?.trim()})`,
    };
  }
  if (answer.action === 'accept') return { approved: true };
  return { approved: false, reason: `A person declined this call${reason ? `: ${reason}` : ''}` };
}

/**
 * The run kind {@link AI_SDK_KIND}: once the question is answered, the worker resumes the
 * stored conversation with the decision (`resumeModelMessages` of `@x/continuation/ai-sdk`)
 * and calls `generateText` again, exactly once, under the run's lease: approved, the AI SDK
 * runs the tool's `execute` and the loop carries on; declined, the model reads the person's
 * reason as the tool's result. A new approval asks again; a finished loop completes the run
 * with the messages it added. A client-side tool's answer is its output (a decline: `The user
 * declined: <reason>`). A cancelled question ends the run, running nothing. A run
 * waiting on a tool that `settings.tools` does not offer fails without being resumed.
 *
 * @example
 * const executive = createExecutive({ storage, kinds: { [AI_SDK_KIND]: aiSdkKind({ settings }) } });
 * await executive.work({ once: true });
 */
export function aiSdkKind<TOOLS extends ToolSet>(options: AiSdkKindOptions<TOOLS>): RunKind {
  const { settings, policy = NO_QUESTION_POLICY } = options;
  const model = { id: modelIdOf(settings.model) };
  const offered = new Set(Object.keys(settings.tools ?? {}));
  return {
    refuse({ suspension }) {
      const tool = suspension?.toolName;
      if (tool === undefined || offered.has(tool)) return undefined;
      return `[@x/ai-sdk] the stored loop waits on the tool "${tool}", which these settings do not offer (${[...offered].join(', ') || 'none'}): it is not resumed`;
    },
    async resume({ flow, job, suspension, answer, expiredAt }) {
      const { runId, conversationId } = job.run;
      if (answer.action === 'cancel') {
        await cancelRun(
          flow.storage,
          job,
          expiredAt
            ? 'no answer came before the deadline; its default (cancel) was applied'
            : 'cancelled by a person',
        );
        return { status: 'cancelled', runId, conversationId };
      }
      const decision = isClientSide(settings.tools, suspension.toolName)
        ? outputOf(answer, expiredAt, suspension.toolUseId)
        : approvalOf(answer, expiredAt);
      const messages = resumeMessagesOf(suspension, decision);
      const call = { ...settings, messages, abortSignal: job.signal } as Parameters<
        typeof generateText<TOOLS>
      >[0];
      const result = await generateText(call);
      const turn = outcomeOf([...messages, ...result.response.messages]);
      return finishTurn(flow, job, suspension, model, turn, policy);
    },
  };
}

/** The stored conversation with the decision, as `generateText`'s messages. */
function resumeMessagesOf(suspension: Suspension, decision: ToolAnswer): ModelMessage[] {
  try {
    return resumeModelMessages(suspension, decision) as ModelMessage[];
  } catch (error) {
    throw refused(
      `its continuation ${suspension.interactionId} cannot be resumed (${(error as Error).message})`,
    );
  }
}
