import type { AssistantMessage, Message } from '@x/wire';
import type { TurnObserver } from 'runner/dist/agent.js';
import { resumeNext, type SuspendedTurn, suspend } from 'runner/dist/executive.js';
import { ScriptedModel } from 'runner/dist/model/scripted.js';
import type { Storage } from 'runner/dist/storage.js';

/** The scripted model: after the answer it finishes the turn with one text message. */
export const model = new ScriptedModel('bench', {
  description: 'Bench: finishes the resumed turn at once.',
  steps: [{ text: 'Starting the trip from {{answer}}. Done.' }],
});

export const quietObserver: TurnObserver = { event() {} };

/**
 * The executive's suspend step for a turn whose transcript is `messages` (ending with the
 * asking assistant message): the runner's own `suspend`, in one transaction. `startRun`
 * reaches it only from a fresh one-message goal, and no scripted run grows to 100 messages
 * or more by itself, so the bench builds the suspended turn directly.
 */
export async function suspendTurn(
  storage: Storage,
  token: string,
  conversationId: string,
  messages: Message[],
): Promise<void> {
  const assistant = messages.at(-1) as AssistantMessage;
  const toolUse = assistant.content.find((b) => b.type === 'tool_use');
  if (toolUse?.type !== 'tool_use') throw new Error('the transcript must end with a tool call');
  const outcome: SuspendedTurn = {
    status: 'suspended',
    messages: messages.slice(0, -1),
    assistant,
    toolUse,
    question: {
      kind: 'ask_user',
      question: 'Which city should the trip start from?',
      options: null,
      priority: 0,
    },
  };
  await storage.transaction((tx) => suspend(tx, storage, conversationId, model, outcome, token));
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
