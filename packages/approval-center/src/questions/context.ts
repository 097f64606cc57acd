import type { PauseRecord } from '@x/askuser';
import { messageText, runMessages, runOf } from '@x/executive';
import type { Message } from '@x/wire';
import type { ContextView, ToolCallView } from '../contract/index.js';
import { approvalsOf, recentView, runView, type ViewSource } from './views.js';

/** How many of the conversation's latest messages the context carries. */
const RECENT_MESSAGES = 12;

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
 * The context of the question `token`, read in one snapshot: the question, the other
 * questions of its run, the run record and what the run's transcript holds so far (none for
 * a question no executive run owns).
 * @throws {AskUserError} `not_found` for a token no question has.
 */
export async function contextView(source: ViewSource, token: string): Promise<ContextView> {
  const { storage } = source;
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
    const history = all.filter((p) => runOf(p) === runId);
    const approvals = await approvalsOf(storage, history, tx);
    const first = messages.find((m) => m.role === 'user');
    const recent = messages.slice(-RECENT_MESSAGES);
    return {
      token,
      conversationId,
      goal: first ? messageText(first) : null,
      messages: recent.map((m) => ({ role: m.role, text: messageText(m) })),
      earlierMessages: messages.length - recent.length,
      toolCall: toolCallIn(messages, record.toolCallId),
      source: recentView(source, record, runs).source,
      run: run ? runView(run) : null,
      history: history.map((p) => recentView(source, p, runs, approvals.get(p.token))),
    };
  });
}
