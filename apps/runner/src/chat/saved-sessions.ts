import type { Suspension } from '@x/continuation';
import { questionOf } from '@x/executive';
import type { ToolUseBlock } from '@x/wire';
import type { Storage } from '../storage/index.js';
import type { Output } from '../terminal/output.js';

/** The interactive sessions (not their delegate calls' threads), each with its open question. */
async function chatSessions(
  storage: Storage,
): Promise<Array<{ sessionId: string; waiting: Suspension | undefined }>> {
  const ids = (await storage.checkpoints.list()).map((t) => t.threadId);
  // A delegate call's checkpoint is the thread `SESSION.INTERACTION` of its session.
  const sessions = ids.filter((id) => !ids.some((other) => id.startsWith(`${other}.`)));
  return Promise.all(
    sessions.map(async (sessionId) => {
      const open = await storage.chatContinuations(sessionId).listUnresolved({ sessionId });
      return { sessionId, waiting: open.at(-1) };
    }),
  );
}

/** The chat session whose question was saved last and still waits, if any. */
export async function latestWaitingSession(storage: Storage): Promise<string | undefined> {
  let latest: Suspension | undefined;
  for (const { waiting } of await chatSessions(storage)) {
    if (waiting && (!latest || waiting.createdAt > latest.createdAt)) latest = waiting;
  }
  return latest?.sessionId;
}

/** `runner chat --list`: the sessions of this data folder, and the command that resumes each. */
export async function listSessions(out: Output, storage: Storage): Promise<number> {
  const sessions = await chatSessions(storage);
  for (const { sessionId, waiting } of sessions) {
    const question = waiting && questionOf(toolUseOf(waiting));
    const asked = question && !('error' in question) ? question.question : undefined;
    const state = waiting
      ? `waits on a question${asked ? `: ${asked}` : " (its workers')"}`
      : 'no open question';
    out.record(
      { type: 'session', sessionId, waiting: waiting !== undefined, question: asked ?? null },
      `${sessionId}  ${state}\n  resume: ${out.command(`chat --resume --session ${sessionId}`)}`,
    );
  }
  if (sessions.length === 0) out.record({ type: 'none' }, 'no chat sessions yet');
  return 0;
}

/** The tool call a saved suspension waits on. */
export function toolUseOf(suspension: Suspension): ToolUseBlock {
  return {
    type: 'tool_use',
    id: suspension.toolUseId,
    name: suspension.toolName ?? 'ask_user',
    input: suspension.toolInput ?? {},
  };
}
