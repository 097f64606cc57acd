import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { AskUserError } from '@x/askuser';
import { ContinuationError } from '@x/continuation';
import { type RunJob, RunWorker } from '@x/continuation-postgres';
import { assistantMessage, userMessage } from '@x/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ExecutiveError,
  type FlowContext,
  finishTurn,
  migrate,
  openWork,
  outboxEvents,
  recordStart,
  retry,
  type SuspendedTurn,
  sqlExecutiveStorage,
  stop,
  suspendNewRun,
} from '../src/index.js';

let counter = 0;
/** An id of its own for each case: the cases share one database. */
export const fresh = (what: string) => `${what}-${process.pid}-${++counter}`;

/** A turn stopped on `ask_user`, as `runTurn` returns it. */
export function askingTurn(question = 'Which city?'): SuspendedTurn {
  const toolUse = { type: 'tool_use' as const, id: 'tu1', name: 'ask_user', input: { question } };
  return {
    status: 'suspended',
    messages: [userMessage('Plan a trip')],
    assistant: assistantMessage(toolUse),
    toolUse,
    question: { kind: 'ask_user', question, options: null, priority: 0 },
  };
}

/**
 * Registers the flows' tests on one target kind (one PGlite instance per file), each flow
 * through the package's public API over {@link sqlExecutiveStorage}.
 */
export async function describeFlowsOn(kind: SqlTarget['kind']): Promise<void> {
  for (const spec of (await sqlTargets()).filter((t) => t.kind === kind)) {
    describe.skipIf(spec.skip)(`the flows on ${spec.kind}`, () => {
      let target: SqlTarget;
      let flow: FlowContext;
      beforeAll(async () => {
        target = await spec.open();
        await migrate(target.db);
        const storage = sqlExecutiveStorage(target.db, { queue: { synchronousClaim: true } });
        const events = outboxEvents(storage, {
          channels: (event) => (event.kind === 'question.created' ? ['webhook'] : []),
          wants: (k) => k === 'question.created',
        });
        flow = { storage, events };
      });
      afterAll(() => target?.close());

      describe('suspendNewRun', () => {
        it('writes the run, its question, its continuation and its notification together', async () => {
          const token = fresh('q');
          const run = { runId: fresh('r'), conversationId: fresh('c') };
          const waiting = await suspendNewRun(flow, run, { id: 'm' }, askingTurn(), {}, token);
          expect(waiting).toMatchObject({ status: 'waiting', token, question: 'Which city?' });
          const { storage } = flow;
          expect((await storage.runs().get(run.runId))?.status).toBe('waiting');
          expect((await storage.pauses().getByToken(token)).resumeContext).toMatchObject({
            run: run.runId,
          });
          const saved = await storage.continuations().load(token);
          expect(saved.messages?.at(-1)?.role).toBe('assistant');
          const sent = (await storage.notifications().list()).filter(
            (n) => (n.payload as { data?: { token?: string } }).data?.token === token,
          );
          expect(sent.map((n) => n.kind)).toEqual(['question.created']);
        });

        it('writes none of them when one write fails', async () => {
          const token = fresh('q');
          const first = { runId: fresh('r'), conversationId: fresh('c') };
          await suspendNewRun(flow, first, { id: 'm' }, askingTurn(), {}, token);
          // A second run asking under the same token: its question's insert is refused.
          const second = { runId: fresh('r'), conversationId: first.conversationId };
          const refused = suspendNewRun(flow, second, { id: 'm' }, askingTurn('Again?'), {}, token);
          await expect(refused).rejects.toSatisfy((error) => AskUserError.is(error));
          expect(await flow.storage.runs().get(second.runId)).toBeUndefined();
          expect((await flow.storage.pauses().getByToken(token)).question).toBe('Which city?');
        });
      });

      describe('start, stop and retry', () => {
        it('records a run that completed at once with its transcript, in one statement', async () => {
          const run = { runId: fresh('r'), conversationId: fresh('c') };
          const messages = [userMessage('Hi'), assistantMessage('Hello')];
          const outcome = { status: 'completed' as const, messages };
          const done = await recordStart(flow, run, { id: 'm' }, outcome, { model: 'm' });
          expect(done).toEqual({ status: 'completed', ...run, messages });
          expect(await flow.storage.runs().transcript(run.runId)).toEqual(messages);
        });

        it('stop closes the questions, continuations and runs of a conversation at once', async () => {
          const run = { runId: fresh('r'), conversationId: fresh('c') };
          const waiting = await recordStart(flow, run, { id: 'm' }, askingTurn(), {});
          expect(waiting.status).toBe('waiting');
          expect((await openWork(flow.storage, run.conversationId))?.questions).toHaveLength(1);
          expect(await stop(flow, run.conversationId)).toEqual({
            pauses: 1,
            continuations: 1,
            runs: 1,
          });
          expect(await openWork(flow.storage, run.conversationId)).toBeUndefined();
          expect((await flow.storage.runs().get(run.runId))?.status).toBe('cancelled');
          expect(await stop(flow, run.conversationId)).toEqual({
            pauses: 0,
            continuations: 0,
            runs: 0,
          });
        });

        it('retry refuses a run that has not failed as a conflict, changing nothing', async () => {
          const run = { runId: fresh('r'), conversationId: fresh('c') };
          await recordStart(flow, run, { id: 'm' }, askingTurn(), {});
          const refused = retry(flow.storage, run.runId);
          await expect(refused).rejects.toSatisfy((error) =>
            ExecutiveError.hasCode(error, 'conflict'),
          );
          expect((await flow.storage.runs().get(run.runId))?.status).toBe('waiting');
        });
      });

      describe('resume under the lease', () => {
        /** A waiting run whose question was answered: its run is ready. */
        async function answeredRun() {
          const token = fresh('q');
          const run = { runId: fresh('r'), conversationId: fresh('c') };
          await suspendNewRun(flow, run, { id: 'm' }, askingTurn(), {}, token);
          const answer = { action: 'accept' as const, content: 'Kyoto' };
          await flow.storage.pauses().markResumed(token, answer);
          await flow.storage.runs().markReady(token, answer);
          return { token, run };
        }

        /** Two workers draining at once, each resuming with `resume`: how often it ran. */
        async function drainTwice(resume: (job: RunJob) => Promise<unknown>) {
          const { storage } = flow;
          const workers = [1, 2].map(
            () =>
              new RunWorker({ queue: storage.runs(), holder: () => storage.leaseHolder(), resume }),
          );
          await Promise.all(workers.map((worker) => worker.drain()));
        }

        it('completes an answered run exactly once, with the turn it resumed', async () => {
          const { run } = await answeredRun();
          const resumed: string[] = [];
          await drainTwice(async (job) => {
            resumed.push(job.run.runId);
            const suspension = job.suspension;
            if (!suspension) throw new Error('the claim returned no continuation');
            const messages = [...(suspension.messages ?? []), assistantMessage('Kyoto it is')];
            const turn = { status: 'completed' as const, messages };
            return finishTurn(flow, job, suspension, { id: 'm' }, turn);
          });
          expect(resumed.filter((id) => id === run.runId)).toHaveLength(1);
          expect((await flow.storage.runs().get(run.runId))?.status).toBe('completed');
          const transcript = await flow.storage.runs().transcript(run.runId);
          expect(transcript?.at(-1)).toEqual(assistantMessage('Kyoto it is'));
        });

        it('writes nothing of a turn whose run was taken from it (stopped mid-resume)', async () => {
          const { run } = await answeredRun();
          let refused: unknown;
          await drainTwice(async (job) => {
            if (job.run.runId !== run.runId || !job.suspension) return undefined;
            // The conversation is stopped while the turn runs: the lease is gone.
            await stop(flow, run.conversationId);
            const asked = askingTurn('A second question?');
            const turn = { ...asked, messages: job.suspension.messages ?? [] };
            refused = await finishTurn(flow, job, job.suspension, { id: 'm' }, turn).catch(
              (error: unknown) => error,
            );
            return undefined;
          });
          expect(ContinuationError.hasCode(refused, 'lease_lost')).toBe(true);
          expect((await flow.storage.runs().get(run.runId))?.status).toBe('cancelled');
          expect(await flow.storage.pauses().listPending(run.conversationId)).toEqual([]);
        });
      });
    });
  }
}
