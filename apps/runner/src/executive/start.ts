import { randomUUID } from 'node:crypto';
import { userMessage } from '@x/wire';
import { runTurn, type TurnObserver } from '../agent.js';
import { runDelegate } from '../delegate.js';
import { notFoundError } from '../errors.js';
import type { Model } from '../model/model.js';
import type { Storage } from '../storage.js';
import { type RunResult, suspend, suspendDelegation } from './suspend.js';

/** What stopping a conversation closed. */
export interface Stopped {
  pauses: number;
  continuations: number;
  runs: number;
}

/**
 * The loop-stop path: resolves every open pause of the conversation with the
 * auto-terminated marker, marks its continuations resolved and cancels its runs, in one
 * transaction (a worker running one of them then has its terminal write refused).
 */
export async function stopConversation(storage: Storage, conversationId: string): Promise<Stopped> {
  return storage.transaction(async (tx) => {
    const pauses = await storage.pauses(tx).autoResolveForConversation(conversationId);
    const store = storage.continuations(tx);
    let continuations = 0;
    for (const open of await store.listUnresolved({ sessionId: conversationId })) {
      await store.markResolved(open.interactionId);
      continuations++;
    }
    const runs = await storage.runs(tx).cancelConversation(conversationId);
    return { pauses, continuations, runs };
  });
}

/**
 * `runner stop` and the API's stop: {@link stopConversation}, where a conversation that had
 * nothing open and no recorded run is `not_found` (exit 3, HTTP 404).
 */
export async function stopKnownConversation(
  storage: Storage,
  conversationId: string,
): Promise<Stopped> {
  const closed = await stopConversation(storage, conversationId);
  const nothing = closed.pauses + closed.continuations + closed.runs === 0;
  if (nothing && (await storage.runs().list({ conversationId, limit: 1 })).length === 0) {
    throw notFoundError(`no conversation ${conversationId}: no run of it is recorded`);
  }
  return closed;
}

/**
 * `runner exec`: runs a goal until the turn completes or waits on a person, and records
 * the run. A conversation that still has open pauses is stopped first (`onStopped` hears
 * of it before the turn starts), so its transcript never holds a tool_use without its
 * tool_result.
 */
export async function startRun(
  storage: Storage,
  model: Model,
  goal: string,
  conversationId: string,
  observer: TurnObserver,
  onStopped: (stopped: Stopped) => void = () => {},
): Promise<RunResult & { stopped: Stopped }> {
  const stopped = await stopConversation(storage, conversationId);
  onStopped(stopped);
  const runId = randomUUID();
  const outcome = await runTurn(model, [userMessage(goal)], observer, {
    delegate: runDelegate(model, observer),
  });
  const meta = { model: model.id };
  if (outcome.status === 'completed') {
    await storage.runs().create({
      runId,
      conversationId,
      status: 'completed',
      messages: outcome.messages,
      meta,
    });
    return { status: 'completed', runId, conversationId, messages: outcome.messages, stopped };
  }
  const waiting = await storage.transaction(async (tx) => {
    const run = { runId, conversationId };
    const interactionId = randomUUID();
    const result =
      outcome.status === 'delegated'
        ? await suspendDelegation(tx, storage, run, model, outcome, interactionId)
        : await suspend(tx, storage, run, model, outcome, interactionId);
    await storage
      .runs(tx)
      .create({ runId, conversationId, status: 'waiting', interactionId, meta });
    return result;
  });
  return { ...waiting, stopped };
}
