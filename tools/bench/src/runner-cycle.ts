import { createSuspension } from '@x/continuation';
import type { AssistantMessage, Message } from '@x/wire';
import type { TurnObserver } from 'runner/dist/agent.js';
import { resumeNext } from 'runner/dist/executive.js';
import { ScriptedModel } from 'runner/dist/model/scripted.js';
import type { Storage } from 'runner/dist/storage.js';

/** The scripted model: after the answer it finishes the turn with one text message. */
export const model = new ScriptedModel('bench', {
  description: 'Bench: finishes the resumed turn at once.',
  steps: [{ text: 'Starting the trip from {{answer}}. Done.' }],
});

export const quietObserver: TurnObserver = { event() {} };

/**
 * The executive's suspend step for a turn whose transcript is `messages`: the pause row
 * (token = interaction id) and the continuation WITH the full messages, in one transaction.
 * It mirrors `suspend` in apps/runner/src/executive.ts, which is not exported and which
 * `startRun` reaches only with a fresh one-message goal (runTurn stops after 25 model calls,
 * so no scripted run reaches 100 messages or more by itself).
 */
export async function suspend(
  storage: Storage,
  token: string,
  conversationId: string,
  messages: Message[],
): Promise<void> {
  const assistant = messages.at(-1) as AssistantMessage;
  const use = assistant.content.find((b) => b.type === 'tool_use');
  if (use?.type !== 'tool_use') throw new Error('the transcript must end with a tool call');
  const suspension = createSuspension({
    interactionId: token,
    sessionId: conversationId,
    toolUseId: use.id,
    assistant,
    messages,
  });
  await storage.transaction(async (tx) => {
    await storage.pauses(tx).insert({
      token,
      conversationId,
      kind: 'ask_user',
      question: 'Which city should the trip start from?',
      options: null,
      priority: 0,
      toolCallId: use.id,
      resumeContext: { model: model.id },
    });
    await storage.continuations(tx).save(suspension);
  });
}

/** The operator's answer. */
export async function answer(storage: Storage, token: string): Promise<void> {
  await storage.pauses().markResumed(token, { action: 'accept', content: 'Lisbon' });
}

/** One wake: claims the answered pause, resumes, runs the model to a terminal state. */
export async function wakeOnce(storage: Storage, token: string): Promise<void> {
  const resumed = await resumeNext(
    storage,
    () => model,
    () => quietObserver,
  );
  if (resumed?.token !== token || resumed.result.status !== 'completed') {
    throw new Error(`wake resumed ${resumed?.token ?? 'nothing'} (${resumed?.result.status})`);
  }
}
