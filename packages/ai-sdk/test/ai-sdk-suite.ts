import { setTimeout as sleep } from 'node:timers/promises';
import { createAnthropic } from '@ai-sdk/anthropic';
import { type FakeLlm, type Script, startFakeLlm } from '@internal/fake-llm';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import {
  answer as answerQuestion,
  createExecutive,
  type ExecutiveStorage,
  migrate,
  type RunResult,
  sqlExecutiveStorage,
} from '@x/executive';
import { stepCountIs, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AI_SDK_KIND, type AiSdkTurnSettings, aiSdkKind, startAiSdkRun } from '../src/index.js';

let counter = 0;
const fresh = (what: string) => `${what}-${process.pid}-${++counter}`;

/**
 * The scripted model: it pays the amount asked through `pay`, then, when `refund` is offered
 * and the payment went through, refunds it; then it sums up with the last tool result.
 */
const payer: Script = ({ tools, calls, userText }) => {
  const amount = Number(/\d+/.exec(userText)?.[0] ?? 10);
  if (userText.startsWith('Hello')) return { text: 'Hello to you.' };
  if (userText.startsWith('Ask')) {
    const asked = calls.find((call) => call.name === 'ask_user');
    if (!asked) return { toolCall: { name: 'ask_user', input: { question: 'Which city?' } } };
    return { text: `City: ${asked.result ?? ''}` };
  }
  const paid = calls.find((call) => call.name === 'pay');
  if (!paid) return { toolCall: { name: 'pay', input: { amount } } };
  const refunded = calls.find((call) => call.name === 'refund');
  if (tools.includes('refund') && !refunded && paid.result?.startsWith('paid')) {
    return { toolCall: { name: 'refund', input: { amount } } };
  }
  return { text: `Done: ${calls.at(-1)?.result ?? ''}` };
};

/** A `generateText` loop whose tools need approval and count their runs, on the fake server. */
function payingLoop(llm: FakeLlm, withRefund = false) {
  const ran: string[] = [];
  const anthropic = createAnthropic({ baseURL: llm.url, apiKey: 'fake' });
  const pay = tool({
    description: 'Pays an amount',
    inputSchema: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }) => {
      ran.push(`pay ${amount}`);
      return `paid ${amount}`;
    },
  });
  const refund = tool({
    description: 'Refunds an amount',
    inputSchema: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }) => {
      ran.push(`refund ${amount}`);
      return `refunded ${amount}`;
    },
  });
  // No execute: a client-side tool, answered by the person.
  const askUser = tool({
    description: 'Asks the person',
    inputSchema: z.object({ question: z.string() }),
  });
  const settings: AiSdkTurnSettings = {
    model: anthropic('fake'),
    system: 'Pay what you are asked to pay.',
    tools: withRefund ? { pay, refund, ask_user: askUser } : { pay, ask_user: askUser },
    stopWhen: stepCountIs(5),
    maxOutputTokens: 1024,
    providerOptions: { anthropic: { disableParallelToolUse: true } },
  };
  return { settings, ran };
}

/**
 * Registers the AI SDK run kind's tests on one target kind (one PGlite instance per file),
 * through the public API over `@x/executive`'s SQL storage and worker.
 */
export async function describeAiSdkOn(kind: SqlTarget['kind']): Promise<void> {
  for (const spec of (await sqlTargets()).filter((t) => t.kind === kind)) {
    describe.skipIf(spec.skip)(`AI SDK runs on ${spec.kind}`, () => {
      let target: SqlTarget;
      let storage: ExecutiveStorage;
      let llm: FakeLlm;
      const flow = () => ({ storage, events: { wants: () => false, record: async () => {} } });
      beforeAll(async () => {
        target = await spec.open();
        await migrate(target.db);
        storage = sqlExecutiveStorage(target.db, { queue: { synchronousClaim: true } });
        llm = await startFakeLlm(payer);
      });
      afterAll(async () => {
        await llm?.close();
        await target?.close();
      });

      /** Starts a run of `settings` asking to pay `amount`; it waits on its approval. */
      async function started(settings: AiSdkTurnSettings, amount = 10) {
        const ids = { runId: fresh('r'), conversationId: fresh('c') };
        const content = `Pay ${amount}`;
        const waiting = await startAiSdkRun(flow(), ids, settings, [{ role: 'user', content }]);
        expect(waiting.status).toBe('waiting');
        return waiting as Extract<RunResult, { status: 'waiting' }>;
      }

      /** Answers the question `token` through the executive's answer flow. */
      async function answer(token: string, action: 'accept' | 'decline', content = '') {
        await answerQuestion(flow(), token, { action, content });
      }

      const worker = (settings: AiSdkTurnSettings) =>
        createExecutive({ storage, kinds: { [AI_SDK_KIND]: aiSdkKind({ settings }) } });

      it('asks one approve question for the call, naming the tool and its arguments', async () => {
        const { settings, ran } = payingLoop(llm);
        const waiting = await started(settings, 42);
        const [pending, ...more] = await storage.pauses().listPending(waiting.conversationId);
        expect(more).toEqual([]);
        expect(pending?.token).toBe(waiting.token);
        expect(pending?.kind).toBe('approve');
        expect(pending?.question).toBe('Allow the agent to call pay with {"amount":42}?');
        // The page offers no edit: the AI SDK cannot run the call with other arguments.
        expect(pending?.resumeContext).toMatchObject({ fixedArguments: true });
        expect(ran).toEqual([]);
        const run = await storage.runs().get(waiting.runId);
        expect(run?.status).toBe('waiting');
        expect(run?.meta).toEqual({ kind: AI_SDK_KIND });
      });

      it('a loop that asks nothing completes at once and records no run', async () => {
        const { settings } = payingLoop(llm);
        const ids = { runId: fresh('r'), conversationId: fresh('c') };
        const done = await startAiSdkRun(flow(), ids, settings, [
          { role: 'user', content: 'Hello' },
        ]);
        expect(done.status).toBe('completed');
        expect(JSON.stringify(done)).toContain('Hello to you.');
        expect(await storage.runs().get(ids.runId)).toBeUndefined();
      });

      it('approved: the tool runs once and the run completes with the final answer', async () => {
        const { settings, ran } = payingLoop(llm);
        const waiting = await started(settings, 10);
        await answer(waiting.token, 'accept', 'yes');
        const executive = worker(settings);
        await executive.work({ once: true });
        expect(ran).toEqual(['pay 10']);
        expect((await storage.runs().get(waiting.runId))?.status).toBe('completed');
        const transcript = JSON.stringify(await storage.runs().transcript(waiting.runId));
        expect(transcript).toContain('paid 10');
        expect(transcript).toContain('Done: paid 10');
        // Nothing is left to resume: a second drain runs nothing.
        await executive.work({ once: true });
        expect(ran).toEqual(['pay 10']);
      });

      it('declined: the tool does not run and the model reads the reason as its result', async () => {
        const { settings, ran } = payingLoop(llm);
        const waiting = await started(settings, 20);
        await answer(waiting.token, 'decline', 'over budget');
        await worker(settings).work({ once: true });
        expect(ran).toEqual([]);
        expect((await storage.runs().get(waiting.runId))?.status).toBe('completed');
        const told = llm.requests
          .map((r) => JSON.stringify(r.body))
          .filter((b) => b.includes('over budget'));
        expect(told).toHaveLength(1);
        const transcript = JSON.stringify(await storage.runs().transcript(waiting.runId));
        expect(transcript).toContain('A person declined this call: over budget');
      });

      it('approved with changes: the tool does not run and the model reads they were not applied', async () => {
        const { settings, ran } = payingLoop(llm);
        const waiting = await started(settings, 25);
        await answer(waiting.token, 'accept', 'approved with changes: pay 5');
        await worker(settings).work({ once: true });
        expect(ran).toEqual([]);
        const transcript = JSON.stringify(await storage.runs().transcript(waiting.runId));
        expect(transcript).toContain('with changes, which cannot be applied');
        expect(transcript).toContain('pay 5');
      });

      it('cancelled: the run ends, nothing runs, no question stays open', async () => {
        const { settings, ran } = payingLoop(llm);
        const waiting = await started(settings, 35);
        await answerQuestion(flow(), waiting.token, { action: 'cancel', content: '' });
        await worker(settings).work({ once: true });
        expect(ran).toEqual([]);
        expect((await storage.runs().get(waiting.runId))?.status).toBe('cancelled');
        expect(await storage.pauses().listPending(waiting.conversationId)).toEqual([]);
      });

      it('two workers: the approved run is resumed once, the tool runs once', async () => {
        const { settings, ran } = payingLoop(llm);
        const waiting = await started(settings, 30);
        await answer(waiting.token, 'accept');
        const executives = [worker(settings), worker(settings)];
        await Promise.all(executives.map((e) => e.work({ once: true, concurrency: 2 })));
        expect(ran).toEqual(['pay 30']);
        const run = await storage.runs().get(waiting.runId);
        expect(run?.status).toBe('completed');
        expect(run?.attempts).toBe(1);
      });

      it('a worker that died after the answer, before resuming: the next one resumes once', async () => {
        const { settings, ran } = payingLoop(llm);
        const waiting = await started(settings, 45);
        await answer(waiting.token, 'accept');
        // The dead worker: it claimed the run with a short lease and never resumed it.
        const claimed = await storage.runs().claim({ owner: fresh('dead'), leaseMs: 1 });
        expect(claimed?.run.runId).toBe(waiting.runId);
        await sleep(20);
        const executive = worker(settings);
        await executive.work({ once: true });
        await executive.work({ once: true });
        expect(ran).toEqual(['pay 45']);
        const run = await storage.runs().get(waiting.runId);
        expect(run).toMatchObject({ status: 'completed', attempts: 2, lostAttempts: 1 });
      });

      it('past its deadline: the default denies, and the model reads that nobody answered', async () => {
        const { settings, ran } = payingLoop(llm);
        const ids = { runId: fresh('r'), conversationId: fresh('c') };
        // A deadline already passed: the run is due at once, its question expired by the worker.
        const policy = () => ({
          deadline: { ms: -60_000, answer: { action: 'decline' as const, content: 'no reply' } },
        });
        const messages = [{ role: 'user' as const, content: 'Pay 55' }];
        const waiting = await startAiSdkRun(flow(), ids, settings, messages, { policy });
        expect(waiting.status).toBe('waiting');
        await worker(settings).work({ once: true });
        expect(ran).toEqual([]);
        expect((await storage.runs().get(ids.runId))?.status).toBe('completed');
        const transcript = JSON.stringify(await storage.runs().transcript(ids.runId));
        expect(transcript).toContain('No answer came before the deadline');
        expect(transcript).toContain('no reply');
      });

      it('past its deadline with a default that approves: the run fails, the tool never runs', async () => {
        const { settings, ran } = payingLoop(llm);
        const ids = { runId: fresh('r'), conversationId: fresh('c') };
        const policy = () => ({
          deadline: { ms: -60_000, answer: { action: 'accept' as const, content: '' } },
        });
        const messages = [{ role: 'user' as const, content: 'Pay 65' }];
        await startAiSdkRun(flow(), ids, settings, messages, { policy });
        await worker(settings).work({ once: true });
        expect(ran).toEqual([]);
        const failed = await storage.runs().get(ids.runId);
        expect(failed?.status).toBe('failed');
        expect(failed?.lastError).toContain('a default never approves');
      });

      it('refuses a run that waits on a tool its settings do not offer, running nothing', async () => {
        const { settings, ran } = payingLoop(llm);
        const waiting = await started(settings, 75);
        await answer(waiting.token, 'accept');
        const { pay: _pay, ...without } = settings.tools ?? {};
        await worker({ ...settings, tools: without }).work({ once: true });
        expect(ran).toEqual([]);
        const failed = await storage.runs().get(waiting.runId);
        expect(failed?.status).toBe('failed');
        expect(failed?.lastError).toContain('the tool "pay", which these settings do not offer');
      });

      it('a client-side tool (no execute) is an ask_user question: its answer is the output', async () => {
        const { settings, ran } = payingLoop(llm);
        const asked = [];
        for (const action of ['accept', 'decline'] as const) {
          const ids = { runId: fresh('r'), conversationId: fresh('c') };
          const messages = [{ role: 'user' as const, content: 'Ask for a city' }];
          const waiting = await startAiSdkRun(flow(), ids, settings, messages);
          expect(waiting).toMatchObject({ status: 'waiting', question: 'Which city?' });
          const [pending] = await storage.pauses().listPending(ids.conversationId);
          expect(pending?.kind).toBe('ask_user');
          await answer((waiting as { token: string }).token, action, 'Lisbon');
          await worker(settings).work({ once: true });
          expect((await storage.runs().get(ids.runId))?.status).toBe('completed');
          asked.push(JSON.stringify(await storage.runs().transcript(ids.runId)));
        }
        expect(asked[0]).toContain('City: Lisbon');
        expect(asked[1]).toContain('City: The user declined: Lisbon');
        expect(ran).toEqual([]);
      });

      it('a new approval after the resume asks again, then completes', async () => {
        const { settings, ran } = payingLoop(llm, true);
        const waiting = await started(settings, 40);
        await answer(waiting.token, 'accept');
        const executive = worker(settings);
        await executive.work({ once: true });
        expect(ran).toEqual(['pay 40']);
        expect((await storage.runs().get(waiting.runId))?.status).toBe('waiting');
        const [next, ...more] = await storage.pauses().listPending(waiting.conversationId);
        expect(more).toEqual([]);
        expect(next?.question).toBe('Allow the agent to call refund with {"amount":40}?');
        await answer(next?.token ?? '', 'accept');
        await executive.work({ once: true });
        expect(ran).toEqual(['pay 40', 'refund 40']);
        expect((await storage.runs().get(waiting.runId))?.status).toBe('completed');
        const transcript = JSON.stringify(await storage.runs().transcript(waiting.runId));
        expect(transcript).toContain('Done: refunded 40');
      });
    });
  }
}
