import { randomUUID } from 'node:crypto';
import type { ResumeAnswer } from '@x/askuser';
import { ContinuationError, createSuspension, resumeMessages } from '@x/continuation';
import type { Message } from '@x/wire';
import { userMessage } from '@x/wire';
import { runTurn, type TurnObserver, type TurnOutcome } from './agent.js';
import { claimAnswered } from './claim.js';
import type { Model } from './model/model.js';
import type { Db, Storage } from './storage.js';
import { answerResult } from './tools.js';

/** How an unattended run ended. */
export type RunResult =
  | { status: 'completed'; conversationId: string; messages: Message[] }
  | { status: 'waiting'; conversationId: string; token: string; question: string }
  | { status: 'cancelled'; conversationId: string };

/** What the executive needs to pick a model for a conversation. */
export type ModelFor = (modelId: string) => Model;

/** A turn that stopped on a human tool call. */
export type SuspendedTurn = Extract<TurnOutcome, { status: 'suspended' }>;

/**
 * Saves a suspended turn for later: the pause row (token = interaction id) and the
 * continuation WITH the full messages. Call it inside `storage.transaction`, so that both
 * are written or neither.
 */
export async function suspend(
  tx: Db,
  storage: Storage,
  conversationId: string,
  model: Pick<Model, 'id'>,
  outcome: SuspendedTurn,
  token: string = randomUUID(),
): Promise<Extract<RunResult, { status: 'waiting' }>> {
  const suspension = createSuspension({
    interactionId: token,
    sessionId: conversationId,
    toolUseId: outcome.toolUse.id,
    assistant: outcome.assistant,
    messages: [...outcome.messages, outcome.assistant],
  });
  const { kind, question, options, priority } = outcome.question;
  await storage.pauses(tx).insert({
    token,
    conversationId,
    kind,
    question,
    options,
    priority,
    toolCallId: outcome.toolUse.id,
    resumeContext: { model: model.id },
  });
  await storage.continuations(tx).save(suspension);
  return { status: 'waiting', conversationId, token, question };
}

/**
 * The loop-stop path: resolves every open pause of the conversation with the
 * auto-terminated marker and marks its continuations resolved, atomically. Returns how
 * many pauses and continuations it closed.
 */
export async function stopConversation(
  storage: Storage,
  conversationId: string,
): Promise<{ pauses: number; continuations: number }> {
  return storage.transaction(async (tx) => {
    const pauses = await storage.pauses(tx).autoResolveForConversation(conversationId);
    const store = storage.continuations(tx);
    let continuations = 0;
    for (const open of await store.listUnresolved({ sessionId: conversationId })) {
      await store.markResolved(open.interactionId);
      continuations++;
    }
    return { pauses, continuations };
  });
}

/**
 * `runner exec`: runs a goal until the turn completes or waits on a person. A conversation
 * that still has open pauses is stopped first, so its transcript never holds a tool_use
 * without its tool_result.
 */
export async function startRun(
  storage: Storage,
  model: Model,
  goal: string,
  conversationId: string,
  observer: TurnObserver,
): Promise<RunResult & { stopped: { pauses: number; continuations: number } }> {
  const stopped = await stopConversation(storage, conversationId);
  const outcome = await runTurn(model, [userMessage(goal)], observer);
  if (outcome.status === 'completed') {
    return { status: 'completed', conversationId, messages: outcome.messages, stopped };
  }
  const waiting = await storage.transaction((tx) =>
    suspend(tx, storage, conversationId, model, outcome),
  );
  return { ...waiting, stopped };
}

/** Resuming `token` failed before a terminal state; the pause stays answered and retryable. */
export class ResumeFailedError extends Error {
  override readonly name = 'ResumeFailedError';
  constructor(
    readonly token: string,
    cause: unknown,
  ) {
    super(`resuming ${token} failed: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}

/** One resumed pause, as {@link resumeNext} reports it. */
export interface Resumed {
  token: string;
  answer: ResumeAnswer;
  result: RunResult;
}

/**
 * Takes ONE answered pause whose continuation is unresolved (row lock, SKIP LOCKED: no
 * other executive can take it meanwhile), resumes its turn with `resumeMessages`, and marks
 * the continuation resolved only when the run reached a terminal state: completed, waiting
 * on a new question (saved first, in the same transaction), or cancelled. If the model
 * fails, the transaction rolls back and the pause stays answered and retryable.
 *
 * @returns undefined when nothing is waiting to be resumed.
 */
export async function resumeNext(
  storage: Storage,
  modelFor: ModelFor,
  observerFor: (token: string, conversationId: string) => TurnObserver,
  skip: ReadonlySet<string> = new Set(),
): Promise<Resumed | undefined> {
  return storage.transaction(async (tx) => {
    const claimed = await claimAnswered(tx, skip);
    if (!claimed) return undefined;
    const { token, conversationId, answer, modelId } = claimed;
    const continuations = storage.continuations(tx);
    let suspension: Awaited<ReturnType<typeof continuations.load>>;
    try {
      suspension = await continuations.load(token);
    } catch (error) {
      // Resolved by another route between the claim and now: nothing to do.
      if (ContinuationError.is(error) && error.code === 'already_resolved') return undefined;
      throw error;
    }
    if (answer.action === 'cancel') {
      await continuations.markResolved(token);
      return { token, answer, result: { status: 'cancelled', conversationId } };
    }
    const messages = resumeMessages(suspension, answerResult(suspension.toolUseId, answer));
    let model: Model;
    let outcome: TurnOutcome;
    try {
      // Inside the try: a model that cannot be made (a missing API key) fails this resume
      // only, and it stays answered and retryable, like any model failure.
      model = modelFor(modelId);
      outcome = await runTurn(model, messages, observerFor(token, conversationId));
    } catch (error) {
      // Rolls the transaction back: the claim is released, nothing is marked.
      throw new ResumeFailedError(token, error);
    }
    const result: RunResult =
      outcome.status === 'completed'
        ? { status: 'completed', conversationId, messages: outcome.messages }
        : await suspend(tx, storage, conversationId, model, outcome);
    await continuations.markResolved(token);
    return { token, answer, result };
  });
}
