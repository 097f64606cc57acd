import type { Pending } from '@x/askuser';
import { ContinuationError } from '@x/continuation';
import type { RunRecord, RunStatus } from '@x/continuation-postgres';
import { ExecutiveError, withoutOrigin } from './errors.js';
import { questionEvent } from './events.js';
import type { FlowContext } from './flow.js';
import type { Model } from './model-port.js';
import { NO_QUESTION_POLICY, type QuestionPolicy } from './question-policy.js';
import type { ExecutiveStorage } from './storage.js';
import { suspendDelegation } from './stored-delegation.js';
import { type Reminded, type RunIds, type RunResult, suspendNewRun } from './suspend.js';
import type { TurnOutcome } from './turn.js';

/** What stopping a conversation closed. */
export interface Stopped {
  pauses: number;
  continuations: number;
  runs: number;
}

/**
 * The loop-stop path: resolves every open question of the conversation with the
 * auto-terminated marker (a `question.cancelled` event each, when wanted), marks its
 * continuations resolved and cancels its runs, in one transaction (a worker running one of
 * them then has its terminal write refused).
 */
export async function stop({ storage, events }: FlowContext, conversationId: string) {
  return storage.transaction(async (tx): Promise<Stopped> => {
    // Read first only when question.cancelled is wanted: each closed question is one event.
    const open = events.wants('question.cancelled')
      ? await storage.pauses(tx).listPending(conversationId)
      : [];
    const pauses = await storage.pauses(tx).autoResolveForConversation(conversationId);
    for (const pause of open) {
      await events.record(tx, questionEvent('question.cancelled', pause, { reason: 'stopped' }));
    }
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
 * Runs that may yet resume and so still need their questions and answers: a failed one too,
 * which {@link retry} makes ready again.
 */
export const OPEN_RUN_STATUSES: readonly RunStatus[] = ['waiting', 'ready', 'running', 'failed'];

/** What a conversation still has open: pending questions, and runs that may yet resume. */
export interface OpenWork {
  conversationId: string;
  questions: Pending[];
  /** Waiting, ready, running or failed (`retry` resumes a failed one): each holds an answer or a wait. */
  runs: RunRecord[];
}

/** The conversation's open questions and unfinished runs, or undefined when it has none. */
export async function openWork(
  storage: ExecutiveStorage,
  conversationId: string,
): Promise<OpenWork | undefined> {
  const questions = await storage.pauses().listPending(conversationId);
  const open = await storage.continuations().listUnresolved({ sessionId: conversationId });
  const runIds = [...new Set(open.flatMap((s) => (s.runId ? [s.runId] : [])))];
  const runs = [...(await storage.runs().getMany(runIds)).values()].filter((run) =>
    OPEN_RUN_STATUSES.includes(run.status),
  );
  if (questions.length === 0 && runs.length === 0) return undefined;
  return { conversationId, questions, runs };
}

/**
 * Records how a new run's first turn stopped: completed (the run with its transcript, one
 * statement), waiting on a question ({@link suspendNewRun}) or on its delegate call (the
 * parent's continuation, the checkpoints, the workers' questions and the run, in one
 * transaction). `meta` is kept with the run (its model, requester, trace context).
 */
export async function recordStart(
  flow: FlowContext,
  run: RunIds,
  model: Pick<Model, 'id'>,
  outcome: TurnOutcome,
  meta: Record<string, unknown>,
  policy: QuestionPolicy = NO_QUESTION_POLICY,
): Promise<Exclude<RunResult, Reminded>> {
  const { storage } = flow;
  const { runId, conversationId } = run;
  if (outcome.status === 'completed') {
    const { messages } = outcome;
    await storage.runs().create({ runId, conversationId, status: 'completed', messages, meta });
    return { status: 'completed', runId, conversationId, messages };
  }
  if (outcome.status === 'suspended') {
    return suspendNewRun(flow, run, model, outcome, meta, undefined, policy);
  }
  return storage.transaction(async (tx) => {
    const interactionId = crypto.randomUUID();
    const result = await suspendDelegation(tx, flow, run, model, outcome, interactionId, policy);
    await storage
      .runs(tx)
      .create({ runId, conversationId, status: 'waiting', interactionId, meta });
    return result;
  });
}

/**
 * Makes a failed run ready again.
 * @throws {ExecutiveError} `conflict` for a run that is not failed: it stands as someone else
 *   left it; the run queue's `not_found` for an unknown run.
 */
export async function retry(storage: ExecutiveStorage, runId: string): Promise<RunRecord> {
  return storage
    .runs()
    .retry(runId)
    .catch((error: unknown) => {
      if (!ContinuationError.hasCode(error, 'invalid')) throw error;
      throw new ExecutiveError('conflict', withoutOrigin(error.message), { runId, cause: error });
    });
}
