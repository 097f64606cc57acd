import type { AnsweredPause } from '@x/askuser';
import { ContinuationError, type Suspension } from '@x/continuation';
import type { RunJob } from '@x/continuation-postgres';
import type { Message } from '@x/wire';
import { questionEvent, runEvent } from './events.js';
import type { FlowContext } from './flow.js';
import type { GatedResult } from './gated-call.js';
import type { Model } from './model-port.js';
import { askedUnder } from './policy-gate.js';
import { NO_QUESTION_POLICY, type QuestionPolicy, questionTimes } from './question-policy.js';
import type { ExecutiveDatabase as Db, ExecutiveStorage } from './storage.js';
import {
  answersOf,
  delegatedResult,
  type StoredDelegation,
  saveDelegation,
  suspendDelegation,
} from './stored-delegation.js';
import { type Reminded, type RunResult, requesterOf, suspend } from './suspend.js';
import type { TurnOutcome } from './turn.js';

// The writes of a resume, each one transaction that commits only while the job's lease
// holds (the run's own write first: a worker that lost its lease stops there).

/** Renews the job's lease inside `tx`, or throws `lease_lost`: nothing of `tx` commits. */
async function holdLease(storage: ExecutiveStorage, tx: Db, job: RunJob): Promise<void> {
  if (!(await storage.runs(tx).renew(job.run.runId, job.owner, job.leaseMs))) {
    throw new ContinuationError('lease_lost', `run "${job.run.runId}" was taken over`);
  }
}

/** Ends a claimed run as cancelled with `reason`, and resolves its continuation `token`. */
export async function cancelRun(
  storage: ExecutiveStorage,
  job: RunJob,
  reason: string,
  options: { closeQuestions?: boolean } = {},
): Promise<void> {
  const { runId, conversationId } = job.run;
  await storage.transaction(async (tx) => {
    await storage.runs(tx).finish(runId, job.owner, { status: 'cancelled', reason });
    await storage.continuations(tx).markResolved(job.run.interactionId ?? '');
    // A delegation's other workers' questions close with it.
    if (options.closeQuestions) await storage.pauses(tx).autoResolveForConversation(conversationId);
  });
}

/** Records a gated call's result, fenced by the job's lease; returns the one that stands. */
export function recordGatedResult(
  storage: ExecutiveStorage,
  job: RunJob,
  given: GatedResult,
): Promise<GatedResult> {
  return storage.transaction(async (tx) => {
    await holdLease(storage, tx, job);
    return storage.gatedResults(tx).record(given);
  });
}

/**
 * The deadline sweep of one run, claimed at its question's due time with no answer: applies
 * what is due of the question (its reminder and escalation, then its deadline once passed),
 * exactly once and only while the job's lease holds, in one transaction, with their events.
 * Returns the question's outcome to resume from (expired with its default, or an answer that
 * came in time and found the run claimed), or, while it still waits, the run waiting again
 * until its next due time.
 */
export async function applyDue(
  { storage, events }: FlowContext,
  job: RunJob,
): Promise<{ status: 'resolved'; resolved: AnsweredPause } | Reminded> {
  const { runId, conversationId, deadlineAt } = job.run;
  const token = job.run.interactionId ?? '';
  return storage.transaction(
    async (tx): Promise<{ status: 'resolved'; resolved: AnsweredPause } | Reminded> => {
      const pauses = storage.pauses(tx);
      // The pause row first (as an answer takes it before the run's), then the run's lease.
      const due = await pauses.applyDue(token);
      // Their notifications, in the transaction that applied them (read only when wanted).
      const notify = [
        ...(due.reminded ? (['question.reminded'] as const) : []),
        ...(due.escalated ? (['question.escalated'] as const) : []),
      ].filter((kind) => events.wants(kind));
      if (notify.length > 0) {
        const pause = await pauses.getByToken(token).catch(() => undefined);
        for (const kind of notify) {
          if (pause) await events.record(tx, questionEvent(kind, pause, due.escalated ?? {}));
        }
      }
      const resolved = deadlineAt || !due.pending ? await pauses.expire(token) : undefined;
      if (resolved) {
        await holdLease(storage, tx, job);
        if (resolved.expiredAt) {
          const extra = { answer: resolved.answer, expiredAt: resolved.expiredAt.toISOString() };
          await events.record(tx, questionEvent('question.expired', resolved, extra));
        }
        return { status: 'resolved', resolved };
      }
      await storage.runs(tx).finish(runId, job.owner, {
        status: 'waiting',
        interactionId: token,
        ...(deadlineAt ? { deadlineAt } : {}),
        ...(due.nextAt ? { dueAt: due.nextAt } : {}),
      });
      return {
        status: 'reminded',
        runId,
        conversationId,
        token,
        reminded: due.reminded,
        escalated: due.escalated,
        nextAt: due.nextAt,
      };
    },
  );
}

/**
 * The fenced terminal write of a resumed turn: completed (one statement, or with its
 * `run.completed` event when wanted), or waiting on a new question or delegate call (saved
 * first, then the old continuation marked resolved), in one transaction.
 */
export async function finishTurn(
  flow: FlowContext,
  job: RunJob,
  suspension: Suspension,
  model: Pick<Model, 'id'>,
  turn: TurnOutcome,
  policy: QuestionPolicy = NO_QUESTION_POLICY,
  traceparent?: string,
): Promise<RunResult> {
  const { storage, events } = flow;
  const { runId, conversationId } = job.run;
  const token = job.run.interactionId ?? '';
  const requester = requesterOf(job.run.meta);
  if (turn.status === 'completed') {
    const added: Message[] = turn.messages.slice(suspension.messages?.length ?? 0);
    if (!events.wants('run.completed')) await job.complete(added);
    else {
      await storage.transaction(async (tx) => {
        await storage.runs(tx).complete(runId, job.owner, added);
        await events.record(tx, runEvent('run.completed', job.run));
      });
    }
    return { status: 'completed', runId, conversationId, messages: turn.messages };
  }
  return storage.transaction(async (tx): Promise<RunResult> => {
    // The run first: a worker that lost its lease stops here, and the run row stays locked
    // until the rest is written.
    const next = crypto.randomUUID();
    const ids = { runId, conversationId, ...(requester === undefined ? {} : { requester }) };
    const times =
      turn.status === 'delegated'
        ? {}
        : questionTimes(turn.question, askedUnder(turn.decision, policy));
    await storage.runs(tx).finish(runId, job.owner, {
      status: 'waiting',
      interactionId: next,
      ...(times.deadline ? { deadlineAt: times.deadline.at } : {}),
      ...(times.dueAt ? { dueAt: times.dueAt } : {}),
    });
    const waiting =
      turn.status === 'delegated'
        ? await suspendDelegation(tx, flow, ids, model, turn, next, policy)
        : await suspend(tx, flow, { ...ids, traceparent }, model, turn, next, policy, times);
    await storage.continuations(tx).markResolved(token);
    return waiting;
  });
}

/** Records a delegation's settled workers, fenced by the job's lease. */
export async function saveSettled(
  flow: FlowContext,
  job: RunJob,
  stored: StoredDelegation,
): Promise<void> {
  await flow.storage.transaction(async (tx) => {
    await holdLease(flow.storage, tx, job);
    await saveDelegation(tx, flow, stored);
  });
}

/**
 * A delegated run whose workers have not all finished waits on its continuation again; an
 * answer of a worker question that arrived meanwhile makes it ready at once, so no wake-up
 * is lost. Returns the run's waiting result.
 */
export async function waitAgain(
  storage: ExecutiveStorage,
  job: RunJob,
  stored: StoredDelegation,
): Promise<RunResult> {
  const token = job.run.interactionId ?? '';
  await storage.transaction(async (tx) => {
    // The answer of a worker question takes this lock before it readies the run: either it
    // committed before the check below sees it, or it readies the run after this commits.
    await storage.lockFor(tx, token);
    await storage.runs(tx).finish(job.run.runId, job.owner, {
      status: 'waiting',
      interactionId: token,
    });
    const [answered] = (await answersOf(storage, stored, tx)).values();
    if (answered) await storage.runs(tx).markReady(token, answered);
  });
  return delegatedResult(stored);
}

/**
 * Records a run's failure through `record` (the queue's fail or give-up, over the queue of
 * `tx`), with its `run.failed` event in the same transaction when wanted.
 */
export async function recordFailure(
  { storage, events }: FlowContext,
  job: RunJob,
  reason: string,
  record: (queue: ReturnType<ExecutiveStorage['runs']>) => Promise<void>,
): Promise<void> {
  if (!events.wants('run.failed')) return record(job.queue);
  await storage.transaction(async (tx) => {
    await record(storage.runs(tx));
    await events.record(tx, runEvent('run.failed', job.run, { error: reason }));
  });
}
