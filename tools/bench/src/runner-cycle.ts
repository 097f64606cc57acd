import { randomUUID } from 'node:crypto';
import { encodeSuspension } from '@x/continuation';
import type { Model, TurnObserver } from '@x/executive';
import type { AssistantMessage, Message } from '@x/wire';
import { leasePolicyFromEnv } from 'runner/dist/config/executive-policy.js';
import {
  answer as answerPause,
  type Resumed,
  resumeNext,
  type SuspendedTurn,
  suspendNewRun,
  wake,
} from 'runner/dist/executive/index.js';
import { ScriptedModel } from 'runner/dist/model/scripted.js';
import { openStorage, type Storage } from 'runner/dist/storage/index.js';
import { transcript } from './transcript.js';

/** The scripted model: after the answer it finishes the turn with one text message. */
export const model = new ScriptedModel('bench', {
  description: 'Bench: finishes the resumed turn at once.',
  steps: [{ text: 'Starting the trip from {{answer}}. Done.' }],
});

/** The runner's storage as the bench opens it: on the server at `databaseUrl`, else the embedded default in `dataDir`. */
export function benchStorage(dataDir: string, databaseUrl?: string): Promise<Storage> {
  return openStorage({
    dataDir,
    ...(databaseUrl === undefined ? {} : { databaseUrl }),
    command: 'bench',
    log: () => {},
  });
}

/** A transcript of `n` messages and its continuation record as stored (what the 2-statement floor writes). */
export interface Sized {
  messages: Message[];
  record: string;
}

export function sized(n: number): Sized {
  const messages = transcript(n);
  const assistant = messages.at(-1);
  if (assistant?.role !== 'assistant') throw new Error('bad transcript');
  const record = JSON.stringify(
    encodeSuspension({
      version: 1,
      interactionId: randomUUID(),
      sessionId: 'conv-bench',
      toolUseId: 'toolu_ask_0',
      toolName: 'ask_user',
      assistant,
      messages,
      createdAt: new Date(),
      resolved: false,
    }),
  );
  return { messages, record };
}

export const quietObserver: TurnObserver = { event() {} };

/**
 * The executive's suspend step for a turn whose transcript is `messages` (ending with the
 * asking assistant message): the runner's own `suspendNewRun`, in one transaction, as `exec`
 * writes a run that asked. `startRun` reaches it only from a fresh one-message goal, and no
 * scripted run grows to 100 messages or more by itself, so the bench builds the suspended
 * turn directly.
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
  await suspendNewRun(
    storage,
    { runId: `run-${token}`, conversationId },
    model,
    outcome,
    { model: model.id },
    token,
  );
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

/** A `wake` loop running beside the bench, as `runner wake` runs: woken by LISTEN/NOTIFY. */
export interface WakeLoop {
  /** Resolves when the run waiting on `token` was resumed to completion (call it before answering). */
  resumed(token: string): Promise<void>;
  /** When the model of the latest resumed turn was called (`performance.now()`). */
  readonly modelCalledAt: number;
  close(): Promise<void>;
}

/** Starts a one-worker `wake` loop on `storage`; every run it resumes must be awaited through `resumed`. */
export function startWakeLoop(storage: Storage): WakeLoop {
  const waiting = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
  let modelCalledAt = Number.NaN;
  const timed: Model = {
    id: model.id,
    generate(request) {
      modelCalledAt = performance.now();
      return model.generate(request);
    },
  };
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const onResumed = (resumed: Resumed) => {
    const waiter = waiting.get(resumed.token);
    waiting.delete(resumed.token);
    if (resumed.outcome.status === 'completed') waiter?.resolve();
    else waiter?.reject(new Error(`wake: ${resumed.token} ${resumed.outcome.status}`));
  };
  const loop = wake(storage, {
    once: false,
    concurrency: 1,
    policy,
    modelFor: () => timed,
    observerFor: () => quietObserver,
    onResumed,
    onUnavailable: () => {},
    stop: stopped,
  });
  return {
    resumed: (token) =>
      new Promise<void>((resolve, reject) => waiting.set(token, { resolve, reject })),
    get modelCalledAt() {
      return modelCalledAt;
    },
    async close() {
      stop();
      await loop;
    },
  };
}
