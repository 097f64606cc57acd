import type { AssistantMessage, Message } from '@x/wire';
import type { TurnObserver } from 'runner/dist/agent/turn.js';
import {
  answer as answerPause,
  leasePolicyFromEnv,
  resumeNext,
  type SuspendedTurn,
  suspend,
} from 'runner/dist/executive/index.js';
import { ScriptedModel } from 'runner/dist/model/scripted.js';
import type { Storage } from 'runner/dist/storage/index.js';

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
  const runId = `run-${token}`;
  await storage.transaction(async (tx) => {
    await suspend(tx, storage, { runId, conversationId }, model, outcome, token);
    await storage.runs(tx).create({
      runId,
      conversationId,
      status: 'waiting',
      interactionId: token,
      meta: { model: model.id },
    });
  });
}

/** The operator's answer: the pause answered and its run ready, in one transaction. */
export async function answer(storage: Storage, token: string): Promise<void> {
  await answerPause(storage, token, { action: 'accept', content: 'Lisbon' });
}

const policy = leasePolicyFromEnv();

/** One wake: claims the ready run, resumes it, records its end (completed). */
export async function wakeOnce(storage: Storage, token: string): Promise<void> {
  const resumed = await resumeNext(storage, {
    modelFor: () => model,
    observerFor: () => quietObserver,
    policy,
  });
  if (resumed?.token !== token || resumed.outcome.status !== 'completed') {
    throw new Error(`wake resumed ${resumed?.token ?? 'nothing'} (${resumed?.outcome.status})`);
  }
}
