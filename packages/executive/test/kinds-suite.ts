import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { ContinuationError } from '@x/continuation';
import type { RunWorkerEvent } from '@x/continuation-postgres';
import { assistantMessage, type Message, textOf, userMessage } from '@x/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answer as answerFlow,
  type Claim,
  createExecutive,
  type ExecutiveStorage,
  finishTurn,
  type ModelRequest,
  migrate,
  type ResumingRun,
  type RunKind,
  type RunResult,
  type SuspendedTurn,
  sqlExecutiveStorage,
  stop,
  suspendNewRun,
  TURN_KIND,
  turnKind,
} from '../src/index.js';
import { askingTurn, fresh } from './flows-suite.js';

/** A promise and its resolve, to hold a resume in flight until the test lets it go. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** A resumed turn that asks a second question (a tool call of its own). */
function askingAgain(messages: Message[]): SuspendedTurn {
  const asked = askingTurn('And then?');
  const toolUse = { ...asked.toolUse, id: 'tu2' };
  return { ...asked, messages, assistant: assistantMessage(toolUse), toolUse };
}

/**
 * Registers the run kinds' and the worker's tests on one target kind (one PGlite instance per
 * file), through the package's public API over {@link sqlExecutiveStorage}.
 */
export async function describeKindsOn(kind: SqlTarget['kind']): Promise<void> {
  for (const spec of (await sqlTargets()).filter((t) => t.kind === kind)) {
    describe.skipIf(spec.skip)(`run kinds and the worker on ${spec.kind}`, () => {
      let target: SqlTarget;
      let storage: ExecutiveStorage;
      const flow = () => ({ storage, events: { wants: () => false, record: async () => {} } });
      beforeAll(async () => {
        target = await spec.open();
        await migrate(target.db);
        storage = sqlExecutiveStorage(target.db, { queue: { synchronousClaim: true } });
      });
      afterAll(() => target?.close());

      /** A run of `kind` waiting on its question `token`. */
      async function waitingRun(kind: string) {
        const token = fresh('q');
        const run = { runId: fresh('r'), conversationId: fresh('c') };
        await suspendNewRun(flow(), run, { id: 'm' }, askingTurn(), { kind }, token);
        return { token, run };
      }

      /** Answers the question `token` with the answer flow: its run is ready. */
      async function answer(token: string, content: string) {
        await answerFlow(flow(), token, { action: 'accept', content });
      }

      /** An echo kind: completes the run with the answer, or asks again while it is "again". */
      function echoKind(seen: ResumingRun[]): RunKind {
        return {
          async resume(resuming) {
            seen.push(resuming);
            const { job, suspension, answer: given } = resuming;
            const messages = [...(suspension.messages ?? []), assistantMessage('noted')];
            const turn =
              given.content === 'again'
                ? askingAgain(messages)
                : { status: 'completed' as const, messages };
            return finishTurn(resuming.flow, job, suspension, { id: 'm' }, turn);
          },
        };
      }

      it('resumes a run of a registered kind exactly once per answer set, with two workers', async () => {
        const seen: ResumingRun[] = [];
        const executives = [1, 2].map(() =>
          createExecutive({ storage, kinds: { echo: echoKind(seen) } }),
        );
        const { token, run } = await waitingRun('echo');
        await answer(token, 'again');
        await Promise.all(executives.map((e) => e.work({ once: true, concurrency: 2 })));
        const mine = () => seen.filter((s) => s.job.run.runId === run.runId);
        expect(mine().map((s) => s.answer.content)).toEqual(['again']);
        const waiting = await storage.runs().get(run.runId);
        expect(waiting?.status).toBe('waiting');
        // The second answer set: the question the kind asked on resume.
        await answer(waiting?.interactionId ?? '', 'Kyoto');
        await Promise.all(executives.map((e) => e.work({ once: true, concurrency: 2 })));
        expect(mine().map((s) => s.answer.content)).toEqual(['again', 'Kyoto']);
        expect((await storage.runs().get(run.runId))?.status).toBe('completed');
        // Nothing is left to resume: a third drain calls no kind.
        await Promise.all(executives.map((e) => e.work({ once: true })));
        expect(mine()).toHaveLength(2);
      });

      it("hands a run claimed at its due time to its kind's due, instead of sweeping its question", async () => {
        const seen: string[] = [];
        const multi: RunKind = {
          async resume() {
            throw new Error('not resumed without an answer');
          },
          async due({ flow: using, job, suspension }) {
            seen.push(job.run.runId);
            const turn = { status: 'completed' as const, messages: [assistantMessage('swept')] };
            return finishTurn(using, job, suspension, { id: 'm' }, turn);
          },
        };
        const token = fresh('q');
        const run = { runId: fresh('r'), conversationId: fresh('c') };
        // A deadline already passed: the run is due at once.
        const policy = () => ({
          deadline: { ms: -60_000, answer: { action: 'decline' as const, content: 'late' } },
        });
        await suspendNewRun(
          flow(),
          run,
          { id: 'm' },
          askingTurn(),
          { kind: 'multi' },
          token,
          policy,
        );
        const claims: Claim[] = [];
        await createExecutive({ storage, kinds: { multi } }).work({
          once: true,
          onClaimed: (claim) => claims.push(claim),
        });
        expect(seen).toEqual([run.runId]);
        expect(claims.filter((c) => c.runId === run.runId)).toHaveLength(1);
        expect((await storage.runs().get(run.runId))?.status).toBe('completed');
        // The executive's own sweep did not run: the question was not expired by it.
        expect(await storage.pauses().getAnswer(token)).toBeUndefined();
      });

      it('fails a run of a kind no worker registered, saying so, without resuming it', async () => {
        const seen: ResumingRun[] = [];
        const events: RunWorkerEvent<RunResult>[] = [];
        const executive = createExecutive({ storage, kinds: { echo: echoKind(seen) } });
        const { token, run } = await waitingRun('langgraph');
        await answer(token, 'Kyoto');
        await executive.work({ once: true, onEvent: (event) => events.push(event) });
        const failed = await storage.runs().get(run.runId);
        expect(failed?.status).toBe('failed');
        expect(failed?.lastError).toContain('kind "langgraph"');
        expect(failed?.lastError).toContain('echo');
        // Failed at once: an unknown kind would fail the same way on every attempt.
        expect(
          events.find((e) => e.type === 'run-failed' && e.job.run.runId === run.runId),
        ).toBeDefined();
        expect(events.some((e) => e.type === 'retry-scheduled')).toBe(false);
        expect(seen).toEqual([]);
      });

      it('writes nothing of a resume whose lease was lost mid-resume', async () => {
        const events: RunWorkerEvent<RunResult>[] = [];
        let refused: unknown;
        const stopping: RunKind = {
          async resume({ flow: using, job, suspension }) {
            // The conversation is stopped while the kind runs: the lease is gone.
            await stop(using, job.run.conversationId);
            const turn = {
              ...askingTurn('A second question?'),
              messages: suspension.messages ?? [],
            };
            try {
              return await finishTurn(using, job, suspension, { id: 'm' }, turn);
            } catch (error) {
              refused = error;
              throw error;
            }
          },
        };
        const executive = createExecutive({ storage, kinds: { stopping } });
        const { token, run } = await waitingRun('stopping');
        await answer(token, 'Kyoto');
        await executive.work({ once: true, onEvent: (event) => events.push(event) });
        expect(ContinuationError.hasCode(refused, 'lease_lost')).toBe(true);
        expect(events.map((e) => e.type)).toContain('lease-lost');
        expect((await storage.runs().get(run.runId))?.status).toBe('cancelled');
        expect(await storage.pauses().listPending(run.conversationId)).toEqual([]);
      });

      it('resumes a run that names no kind with the turn kind: the answer paired with its call', async () => {
        const sent: ModelRequest[] = [];
        const model = {
          id: 'm',
          async generate(request: ModelRequest) {
            sent.push(request);
            return assistantMessage('Kyoto it is');
          },
        };
        const kinds = { [TURN_KIND]: turnKind({ modelFor: () => model, system: 'S', tools: {} }) };
        const token = fresh('q');
        const run = { runId: fresh('r'), conversationId: fresh('c') };
        await suspendNewRun(flow(), run, { id: 'm' }, askingTurn(), { model: 'm' }, token);
        await answer(token, 'Kyoto');
        await createExecutive({ storage, kinds }).work({ once: true });
        expect(sent).toHaveLength(1);
        const last = sent[0]?.messages.at(-1);
        expect(last?.content).toEqual([
          { type: 'tool_result', tool_use_id: 'tu1', content: 'Kyoto' },
        ]);
        expect(sent[0]?.system).toBe('S');
        expect((await storage.runs().get(run.runId))?.status).toBe('completed');
        const transcript = (await storage.runs().transcript(run.runId)) ?? [];
        expect(textOf(transcript.at(-1) ?? userMessage(''))).toBe('Kyoto it is');
      });

      it('fails a turn waiting on a tool the turn kind does not offer, without a retry', async () => {
        const model = { id: 'm', generate: async () => assistantMessage('never') };
        const kinds = { [TURN_KIND]: turnKind({ modelFor: () => model, system: 'S', tools: {} }) };
        const asked = askingTurn();
        const toolUse = { ...asked.toolUse, name: 'choose_date' };
        const waiting = { ...asked, assistant: assistantMessage(toolUse), toolUse };
        const token = fresh('q');
        const run = { runId: fresh('r'), conversationId: fresh('c') };
        await suspendNewRun(flow(), run, { id: 'm' }, waiting, {}, token);
        await answer(token, 'Monday');
        await createExecutive({ storage, kinds }).work({ once: true });
        const failed = await storage.runs().get(run.runId);
        expect(failed).toMatchObject({ status: 'failed', attempts: 1 });
        expect(failed?.lastError).toContain('tool "choose_date" is not offered');
      });

      it('stops gracefully on abort: the resume in flight finishes, nothing more is claimed', async () => {
        const started = deferred();
        const release = deferred();
        const seen: string[] = [];
        const slow: RunKind = {
          async resume(resuming) {
            seen.push(resuming.job.run.runId);
            started.resolve();
            await release.promise;
            expect(resuming.job.signal.aborted).toBe(false);
            return echoKind([]).resume(resuming);
          },
        };
        const executive = createExecutive({ storage, kinds: { slow } });
        const first = await waitingRun('slow');
        await answer(first.token, 'Kyoto');
        const controller = new AbortController();
        const working = executive.work({ signal: controller.signal, pollMs: 20 });
        await started.promise;
        controller.abort();
        // Answered after the stop: no worker of this executive claims it.
        const second = await waitingRun('slow');
        await answer(second.token, 'Lisbon');
        release.resolve();
        await working;
        expect((await storage.runs().get(first.run.runId))?.status).toBe('completed');
        expect(seen).toEqual([first.run.runId]);
        expect((await storage.runs().get(second.run.runId))?.status).toBe('ready');
        // Left for the next worker.
        await createExecutive({ storage, kinds: { slow: echoKind([]) } }).work({ once: true });
        expect((await storage.runs().get(second.run.runId))?.status).toBe('completed');
      });

      it('cuts a resume still in flight when the grace runs out, releasing its run', async () => {
        const started = deferred();
        const cut: RunKind = {
          async resume({ job }) {
            started.resolve();
            // Waits until the worker cuts it.
            await new Promise((resolve) => job.signal.addEventListener('abort', resolve));
            throw job.signal.reason ?? new Error('cut');
          },
        };
        const events: RunWorkerEvent<RunResult>[] = [];
        const executive = createExecutive({ storage, kinds: { cut } });
        const { token, run } = await waitingRun('cut');
        await answer(token, 'Kyoto');
        const controller = new AbortController();
        const working = executive.work({
          signal: controller.signal,
          graceMs: 1,
          onEvent: (event) => events.push(event),
        });
        await started.promise;
        controller.abort();
        await working;
        expect(events.map((e) => e.type)).toContain('run-released');
        expect((await storage.runs().get(run.runId))?.status).toBe('ready');
      });
    });
  }
}
