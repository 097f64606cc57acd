import type { PauseRecord } from '@x/askuser';
import type { Message } from '@x/wire';
import { messageText, runMessages, runOf } from '../executive/index.js';
import type { Storage } from '../storage/index.js';
import { type RecentView, type RunView, recentView, runView, type SourceView } from './views.js';

/** How many of the conversation's latest messages the context carries. */
const RECENT_MESSAGES = 12;

/** One message of the conversation, as text. */
export interface MessageView {
  role: Message['role'];
  text: string;
}

/** The tool call that asked the question: for an approval, the proposed action and its arguments. */
export interface ToolCallView {
  id: string;
  name: string;
  input: unknown;
}

/** What an operator needs beside one question (pending or answered) to answer it well. */
export interface ContextView {
  token: string;
  conversationId: string;
  /** The goal the conversation's run was started with (its first user message), if known. */
  goal: string | null;
  /** The conversation's latest messages, oldest first. */
  messages: MessageView[];
  /** How many messages came before `messages`. */
  earlierMessages: number;
  toolCall: ToolCallView | null;
  /** The worker that asked, for a question relayed from a sub-agent. */
  source: SourceView | null;
  /** The run the question belongs to: its state and, once it ended, its outcome. */
  run: RunView | null;
  /** The questions of that run (or of the conversation, without a run), oldest first. */
  history: RecentView[];
}

function toolCallIn(messages: readonly Message[], id: string): ToolCallView | null {
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === 'tool_use' && block.id === id) {
        return { id: block.id, name: block.name, input: block.input };
      }
    }
  }
  return null;
}

/**
 * The context of the question `token`, read in one snapshot: the pause, the other questions
 * of its run, the run record and what the run's transcript holds so far.
 * @throws {AskUserError} `not_found` for a token no pause has.
 */
export async function contextView(storage: Storage, token: string): Promise<ContextView> {
  return storage.snapshot(async (tx) => {
    const pauses = storage.pauses(tx);
    const conversationId =
      (await pauses.getAnswer(token))?.conversationId ??
      (await pauses.getByToken(token)).conversationId;
    const all = await pauses.listForConversation(conversationId);
    const record = all.find((p) => p.token === token) as PauseRecord;
    const runId = runOf(record);
    const runs = await storage.runs(tx).getMany(runId === undefined ? [] : [runId]);
    const run = runId === undefined ? undefined : runs.get(runId);
    const messages = (run && (await runMessages(storage, run, tx))) ?? [];
    const first = messages.find((m) => m.role === 'user');
    const recent = messages.slice(-RECENT_MESSAGES);
    return {
      token,
      conversationId,
      goal: first ? messageText(first) : null,
      messages: recent.map((m) => ({ role: m.role, text: messageText(m) })),
      earlierMessages: messages.length - recent.length,
      toolCall: toolCallIn(messages, record.toolCallId),
      source: recentView(record, runs).source,
      run: run ? runView(run) : null,
      history: all.filter((p) => runOf(p) === runId).map((p) => recentView(p, runs)),
    };
  });
}
