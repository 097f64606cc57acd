import { randomUUID } from 'node:crypto';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { Annotation, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import type { ResumeAnswer } from '@x/askuser';
import {
  answer,
  createExecutive,
  type ExecutiveStorage,
  type LeasePolicy,
  migrate as migrateExecutive,
  type QuestionPolicy,
  sqlExecutiveStorage,
} from '@x/executive';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LANGGRAPH_KIND,
  langGraphKind,
  migrate,
  PostgresCheckpointSaver,
  startLangGraphRun,
  type ThreadGraph,
} from '../src/index.js';

const State = Annotation.Root({
  a: Annotation<string>(),
  b: Annotation<string>(),
  got: Annotation<string[]>({ reducer: (x, y) => [...x, ...y], default: () => [] }),
});

/** What a graph's nodes did, counted per node, for one test. */
type Calls = Record<string, number>;

/** The content of the answer an interrupt was resumed with. */
function contentOf(value: unknown): string {
  return String((value as ResumeAnswer).content);
}

/** One node asks, the next one records that it ran (its effect). */
function oneQuestion(calls: Calls) {
  return new StateGraph(State)
    .addNode('ask', () => ({ a: contentOf(interrupt('Which city?')) }))
    .addNode('book', () => {
      calls.book = (calls.book ?? 0) + 1;
      return {};
    })
    .addEdge(START, 'ask')
    .addEdge('ask', 'book')
    .addEdge('book', END);
}

/** Two nodes of one super-step ask at once; a third joins their answers. */
function parallelQuestions(calls: Calls) {
  return new StateGraph(State)
    .addNode('x', () => ({ a: contentOf(interrupt('Which city?')) }))
    .addNode('y', () => ({ b: contentOf(interrupt('Which hotel?')) }))
    .addNode('join', () => {
      calls.join = (calls.join ?? 0) + 1;
      return {};
    })
    .addEdge(START, 'x')
    .addEdge(START, 'y')
    .addEdge('x', 'join')
    .addEdge('y', 'join')
    .addEdge('join', END);
}

/** One node asks three times in a loop (langgraph#7780). */
function loopOfQuestions(calls: Calls) {
  return new StateGraph(State)
    .addNode('loop', () => {
      calls.loop = (calls.loop ?? 0) + 1;
      const got: string[] = [];
      for (let i = 0; i < 3; i++) got.push(contentOf(interrupt(`Stop ${i}?`)));
      return { got };
    })
    .addEdge(START, 'loop')
    .addEdge('loop', END);
}

/** One node asks twice in a row (langgraph#8837: the first value must not answer the second). */
function twoInARow() {
  return new StateGraph(State)
    .addNode('ask', () => {
      const a = contentOf(interrupt('First?'));
      const b = contentOf(interrupt('Second?'));
      return { a, b };
    })
    .addEdge(START, 'ask')
    .addEdge('ask', END);
}

/**
 * Registers the LangGraph run kind's tests on one target kind (one PGlite instance per file),
 * through the public API: a real compiled StateGraph on {@link PostgresCheckpointSaver} and
 * `@x/executive`'s storage, answers and worker on the same database.
 */
export async function describeInterruptsOn(kind: SqlTarget['kind']): Promise<void> {
  for (const spec of (await sqlTargets()).filter((t) => t.kind === kind)) {
    describe.skipIf(spec.skip)(`LangGraph interrupts as questions on ${spec.kind}`, () => {
      let target: SqlTarget;
      let storage: ExecutiveStorage;
      const flow = () => ({ storage, events: { wants: () => false, record: async () => {} } });
      beforeAll(async () => {
        target = await spec.open();
        await migrateExecutive(target.db);
        await migrate(target.db);
        storage = sqlExecutiveStorage(target.db, { queue: { synchronousClaim: true } });
      });
      afterAll(() => target?.close());

      /** The graph compiled on our saver, with its resumes (invokes with a Command) counted. */
      function compiled(graph: { compile(o: object): ThreadGraph }, calls: Calls): ThreadGraph {
        const inner = graph.compile({ checkpointer: new PostgresCheckpointSaver(target.db) });
        return {
          getState: (config) => inner.getState(config),
          invoke: (input, config) => {
            if (input !== null && typeof input === 'object' && 'resume' in input) {
              calls.resumes = (calls.resumes ?? 0) + 1;
            }
            return inner.invoke(input, config);
          },
        };
      }

      /** Starts a run of `graph` on a thread of its own. */
      async function start(graph: ThreadGraph, questionPolicy?: QuestionPolicy) {
        const run = { runId: randomUUID(), conversationId: randomUUID() };
        const options = { graph, ...(questionPolicy ? { questionPolicy } : {}) };
        const started = await startLangGraphRun(flow(), options, run, {});
        return { run, started };
      }

      /** The questions the run waits on, in the order asked. */
      async function questions(conversationId: string) {
        const pending = await storage.pauses().listPending(conversationId);
        return pending.map((p) => ({ token: p.token, question: p.question }));
      }

      const reply = (token: string, content: string) =>
        answer(flow(), token, { action: 'accept', content }, { answeredBy: 'ada' });

      /** One drain of the worker, as `n` executives at once. */
      async function work(graph: ThreadGraph, n = 1, lease?: LeasePolicy) {
        const kinds = { [LANGGRAPH_KIND]: langGraphKind({ graph }) };
        const options = { storage, kinds, ...(lease ? { lease } : {}) };
        const executives = Array.from({ length: n }, () => createExecutive(options));
        await Promise.all(executives.map((e) => e.work({ once: true, concurrency: 2 })));
      }

      /** The run's status and, once completed, the graph's final state it recorded. */
      async function outcome(runId: string) {
        const run = await storage.runs().get(runId);
        const [last] = (await storage.runs().transcript(runId)) ?? [];
        const text = last?.content.find((b) => b.type === 'text');
        return { status: run?.status, state: text ? JSON.parse(text.text) : undefined };
      }

      it('asks an interrupt as a question, and resumes the thread once with its answer', async () => {
        const calls: Calls = {};
        const graph = compiled(oneQuestion(calls), calls);
        const { run, started } = await start(graph);
        expect(started.status).toBe('waiting');
        const asked = await questions(run.conversationId);
        expect(asked.map((q) => q.question)).toEqual(['Which city?']);
        expect((await storage.runs().get(run.runId))?.meta).toMatchObject({ kind: LANGGRAPH_KIND });
        await reply(asked[0]?.token ?? '', 'Kyoto');
        await work(graph);
        expect(await outcome(run.runId)).toMatchObject({
          status: 'completed',
          state: { a: 'Kyoto' },
        });
        expect(calls).toEqual({ resumes: 1, book: 1 });
        // Nothing is left to resume: another drain resumes nothing.
        await work(graph);
        expect(calls).toEqual({ resumes: 1, book: 1 });
      });

      it('asks parallel interrupts as separate questions, resumed together once both are answered', async () => {
        const calls: Calls = {};
        const graph = compiled(parallelQuestions(calls), calls);
        const { run } = await start(graph);
        const asked = await questions(run.conversationId);
        expect(asked.map((q) => q.question).sort()).toEqual(['Which city?', 'Which hotel?']);
        const city = asked.find((q) => q.question === 'Which city?')?.token ?? '';
        const hotel = asked.find((q) => q.question === 'Which hotel?')?.token ?? '';
        await reply(hotel, 'Ryokan');
        await work(graph);
        // One answer of two: the thread is not resumed, the run waits for the other.
        expect(calls).toEqual({});
        expect((await outcome(run.runId)).status).toBe('waiting');
        expect((await questions(run.conversationId)).map((q) => q.token)).toEqual([city]);
        await reply(city, 'Kyoto');
        await work(graph);
        expect(await outcome(run.runId)).toMatchObject({
          status: 'completed',
          state: { a: 'Kyoto', b: 'Ryokan' },
        });
        expect(calls).toEqual({ resumes: 1, join: 1 });
        // Resolved interrupts of parallel nodes do not fire again (langgraph#5952).
        expect(await questions(run.conversationId)).toEqual([]);
      });

      it('asks interrupt() in a loop one question at a time, each resumed once (langgraph#7780)', async () => {
        const calls: Calls = {};
        const graph = compiled(loopOfQuestions(calls), calls);
        const { run } = await start(graph);
        for (const [i, stop] of ['Lisbon', 'Porto', 'Faro'].entries()) {
          const asked = await questions(run.conversationId);
          expect(asked.map((q) => q.question)).toEqual([`Stop ${i}?`]);
          await reply(asked[0]?.token ?? '', stop);
          await work(graph);
        }
        expect(await outcome(run.runId)).toMatchObject({
          status: 'completed',
          state: { got: ['Lisbon', 'Porto', 'Faro'] },
        });
        // The first run and one per answer: no extra resume, no extra run of the node.
        expect(calls).toEqual({ resumes: 3, loop: 4 });
      });

      it('never delivers a consumed answer to a later interrupt (langgraph#8837)', async () => {
        const calls: Calls = {};
        const graph = compiled(twoInARow(), calls);
        const { run } = await start(graph);
        const [first] = await questions(run.conversationId);
        expect(first?.question).toBe('First?');
        await reply(first?.token ?? '', 'one');
        await work(graph);
        // The second interrupt is a new question, not answered with the first's value.
        const [second] = await questions(run.conversationId);
        expect(second?.question).toBe('Second?');
        expect((await outcome(run.runId)).status).toBe('waiting');
        await reply(second?.token ?? '', 'two');
        await work(graph);
        expect(await outcome(run.runId)).toMatchObject({
          status: 'completed',
          state: { a: 'one', b: 'two' },
        });
        expect(calls).toEqual({ resumes: 2 });
      });

      it('resumes a thread once when two workers drain at the same time', async () => {
        const calls: Calls = {};
        const graph = compiled(oneQuestion(calls), calls);
        const { run } = await start(graph);
        const [asked] = await questions(run.conversationId);
        await reply(asked?.token ?? '', 'Kyoto');
        await work(graph, 2);
        expect((await outcome(run.runId)).status).toBe('completed');
        expect(calls).toEqual({ resumes: 1, book: 1 });
      });
      it('asks under the question policy, with the interrupt value kept for the page', async () => {
        const calls: Calls = {};
        const graph = compiled(oneQuestion(calls), calls);
        const policy: QuestionPolicy = () => ({
          audience: ['travel'],
          deadline: { ms: 3_600_000, answer: { action: 'decline', content: 'no answer' } },
        });
        const { run } = await start(graph, policy);
        const [pending] = await storage.pauses().listPending(run.conversationId);
        expect(pending?.audience).toEqual({ names: [], roles: ['travel'] });
        expect(pending?.deadline?.answer).toEqual({ action: 'decline', content: 'no answer' });
        expect(pending?.resumeContext).toMatchObject({ langgraph: { value: 'Which city?' } });
      });

      it("applies the deadline of each open question at the run's due time, then resumes them together", async () => {
        const calls: Calls = {};
        const graph = compiled(parallelQuestions(calls), calls);
        // A deadline already passed: the run is due at once.
        const policy: QuestionPolicy = () => ({
          deadline: { ms: -60_000, answer: { action: 'accept', content: 'any' } },
        });
        const { run } = await start(graph, policy);
        expect(await questions(run.conversationId)).toHaveLength(2);
        await work(graph);
        expect(await outcome(run.runId)).toMatchObject({
          status: 'completed',
          state: { a: 'any', b: 'any' },
        });
        expect(calls).toEqual({ resumes: 1, join: 1 });
      });

      it("keeps the run due at its open question's deadline while it waits for the rest", async () => {
        const calls: Calls = {};
        const graph = compiled(parallelQuestions(calls), calls);
        const policy: QuestionPolicy = () => ({
          deadline: { ms: 3_600_000, answer: { action: 'decline', content: 'no answer' } },
        });
        const { run } = await start(graph, policy);
        const [first, second] = await storage.pauses().listPending(run.conversationId);
        await reply(first?.token ?? '', 'Kyoto');
        await work(graph);
        const waiting = await storage.runs().get(run.runId);
        expect(waiting?.status).toBe('waiting');
        expect(waiting?.deadlineAt).toEqual(second?.deadline?.at);
        expect(calls).toEqual({});
        await reply(second?.token ?? '', 'Ryokan');
        await work(graph);
        expect((await outcome(run.runId)).status).toBe('completed');
      });

      it('cancels the run, and closes its other questions, when one question is cancelled', async () => {
        const calls: Calls = {};
        const graph = compiled(parallelQuestions(calls), calls);
        const { run } = await start(graph);
        const [first] = await questions(run.conversationId);
        await answer(
          flow(),
          first?.token ?? '',
          { action: 'cancel', content: '' },
          { answeredBy: 'ada' },
        );
        await work(graph);
        expect((await outcome(run.runId)).status).toBe('cancelled');
        expect(await questions(run.conversationId)).toEqual([]);
        expect(calls).toEqual({});
      });

      it('does not resume again after an attempt that resumed was cut off before its last write', async () => {
        const calls: Calls = {};
        const inner = compiled(oneQuestion(calls), calls);
        let cut = false;
        // The first resume runs the graph to its end, then the attempt fails before it records it.
        const graph: ThreadGraph = {
          getState: (config) => inner.getState(config),
          invoke: async (input, config) => {
            const output = await inner.invoke(input, config);
            if (calls.resumes === 1 && !cut) {
              cut = true;
              throw new Error('cut off');
            }
            return output;
          },
        };
        const { run } = await start(graph);
        const [asked] = await questions(run.conversationId);
        await reply(asked?.token ?? '', 'Kyoto');
        const lease = { leaseMs: 30_000, retry: { maxAttempts: 3, baseMs: 0 } };
        await work(graph, 1, lease);
        await work(graph, 1, lease);
        expect(cut).toBe(true);
        expect(await outcome(run.runId)).toMatchObject({
          status: 'completed',
          state: { a: 'Kyoto' },
        });
        expect(calls).toEqual({ resumes: 1, book: 1 });
      });
    });
  }
}
