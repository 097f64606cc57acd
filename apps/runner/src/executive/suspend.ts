import {
  type FlowContext,
  type Model,
  type QuestionPolicy,
  type QuestionTimes,
  type RunIds,
  type RunResult,
  type SuspendedTurn,
  suspend as suspendIn,
  suspendNewRun as suspendNewRunIn,
} from '@x/executive';
import { outboxEvents } from '../notify/events.js';
import type { Db, Storage } from '../storage/index.js';

/** The flows' context of the runner: its storage, and its events routed by its notify rules. */
export function flowOf(storage: Storage): FlowContext {
  return { storage, events: outboxEvents(storage) };
}

/** `suspend` of `@x/executive` with the runner's storage and events. */
export function suspend(
  tx: Db,
  storage: Storage,
  run: RunIds,
  model: Pick<Model, 'id'>,
  outcome: SuspendedTurn,
  token?: string,
  policy?: QuestionPolicy,
  times?: QuestionTimes,
): Promise<Extract<RunResult, { status: 'waiting' }>> {
  return suspendIn(tx, flowOf(storage), run, model, outcome, token, policy, times);
}

/** `suspendNewRun` of `@x/executive` with the runner's storage and events. */
export function suspendNewRun(
  storage: Storage,
  run: RunIds,
  model: Pick<Model, 'id'>,
  outcome: SuspendedTurn,
  meta: Record<string, unknown>,
  token?: string,
  policy?: QuestionPolicy,
): Promise<Extract<RunResult, { status: 'waiting' }>> {
  return suspendNewRunIn(flowOf(storage), run, model, outcome, meta, token, policy);
}
