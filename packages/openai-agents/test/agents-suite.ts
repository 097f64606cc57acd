import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeLlm, type Script, startFakeLlm } from '@internal/fake-llm';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { Agent, OpenAIChatCompletionsModel, setTracingDisabled, tool } from '@openai/agents';
import {
  answer as answerQuestion,
  createExecutive,
  type ExecutiveStorage,
  migrate,
  type RunResult,
  type SuspendedTurn,
  sqlExecutiveStorage,
  suspendNewRun,
} from '@x/executive';
import { rowsOf } from '@x/postgres-kit';
import { assistantMessage, userMessage } from '@x/wire';
import { sql } from 'drizzle-orm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OPENAI_AGENTS_KIND, openaiAgentsKind, startAgentRun } from '../src/index.js';

// No trace leaves the machine: the SDK would export them to OpenAI.
setTracingDisabled(true);

/** `value` with every string equal to `from` replaced by `to`, at any depth. */
function replaced(value: unknown, from: string, to: string): unknown {
  if (value === from) return to;
  if (Array.isArray(value)) return value.map((v) => replaced(v, from, to));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaced(v, from, to)]));
  }
  return value;
}

/**
 * A scripted Chat Completions server for what the fake model server cannot answer: two tool
 * calls in one response (`pay` 1 and `pay` 2), then a text naming the tool results it got.
 */
async function startTwoCallServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const messages = (
        JSON.parse(body) as { messages: Array<{ role: string; content?: unknown }> }
      ).messages;
      const results = messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
      const call = (n: number) => ({
        id: `call_two_${n}`,
        type: 'function',
        function: { name: 'pay', arguments: JSON.stringify({ amount: n }) },
      });
      const message =
        results.length === 0
          ? { role: 'assistant', content: null, tool_calls: [call(1), call(2)] }
          : { role: 'assistant', content: `Done: ${results.join(' | ')}` };
      const finish = results.length === 0 ? 'tool_calls' : 'stop';
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: 'chatcmpl-two',
          object: 'chat.completion',
          created: 0,
          model: 'fake',
          choices: [{ index: 0, message, finish_reason: finish }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

let counter = 0;
const fresh = (what: string) => `${what}-${process.pid}-${++counter}`;

/**
 * The scripted model: it pays `amount` through `pay`, then, when `thenRefund` is offered and
 * the payment went through, refunds it; then it sums up with the last tool result.
 */
const payer: Script = ({ tools, calls, userText }) => {
  const amount = Number(/\d+/.exec(userText)?.[0] ?? 10);
  const paid = calls.find((call) => call.name === 'pay');
  if (!paid) return { toolCall: { name: 'pay', input: { amount } } };
  const refunded = calls.find((call) => call.name === 'refund');
  if (tools.includes('refund') && !refunded && paid.result?.startsWith('paid')) {
    return { toolCall: { name: 'refund', input: { amount } } };
  }
  return { text: `Done: ${calls.at(-1)?.result ?? ''}` };
};

/** An agent whose tools need approval and count their calls, on the fake model server. */
function payingAgent(llm: Pick<FakeLlm, 'url'>, withRefund = false) {
  const ran: string[] = [];
  const client = new OpenAI({ baseURL: `${llm.url}/v1`, apiKey: 'fake' });
  const pay = tool({
    name: 'pay',
    description: 'Pays an amount',
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }) => {
      ran.push(`pay ${amount}`);
      return `paid ${amount}`;
    },
  });
  const refund = tool({
    name: 'refund',
    description: 'Refunds an amount',
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }) => {
      ran.push(`refund ${amount}`);
      return `refunded ${amount}`;
    },
  });
  const agent = new Agent({
    name: 'payer',
    instructions: 'Pay what you are asked to pay.',
    model: new OpenAIChatCompletionsModel(client, 'fake'),
    tools: withRefund ? [pay, refund] : [pay],
  });
  return { agent, ran };
}

/**
 * Registers the OpenAI Agents run kind's tests on one target kind (one PGlite instance per
 * file), through the public API over `@x/executive`'s SQL storage and worker.
 */
export async function describeAgentsOn(kind: SqlTarget['kind']): Promise<void> {
  for (const spec of (await sqlTargets()).filter((t) => t.kind === kind)) {
    describe.skipIf(spec.skip)(`OpenAI Agents runs on ${spec.kind}`, () => {
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

      /** Starts a run of `agent` asking to pay `amount`; it waits on its approval. */
      async function started(agent: Agent, amount = 10) {
        const ids = { runId: fresh('r'), conversationId: fresh('c') };
        const waiting = await startAgentRun(flow(), ids, agent, `Pay ${amount}`);
        expect(waiting.status).toBe('waiting');
        return waiting as Extract<RunResult, { status: 'waiting' }>;
      }

      /** Answers the question `token` through the executive's answer flow. */
      async function answer(token: string, action: 'accept' | 'decline', content = '') {
        await answerQuestion(flow(), token, { action, content });
      }

      it('asks one question per interruption, naming the tool and its arguments', async () => {
        const { agent, ran } = payingAgent(llm);
        const waiting = await started(agent, 42);
        const [pending, ...more] = await storage.pauses().listPending(waiting.conversationId);
        expect(more).toEqual([]);
        expect(pending?.token).toBe(waiting.token);
        expect(pending?.kind).toBe('approve');
        expect(pending?.question).toContain('pay');
        expect(pending?.question).toContain('"amount":42');
        // The page offers no edit: the SDK cannot run the call with other arguments.
        expect(pending?.resumeContext).toMatchObject({ fixedArguments: true });
        expect(ran).toEqual([]);
        const run = await storage.runs().get(waiting.runId);
        expect(run?.status).toBe('waiting');
        expect(run?.meta).toEqual({ kind: OPENAI_AGENTS_KIND });
      });

      it('approved: the tool runs once and the run completes with the final output', async () => {
        const { agent, ran } = payingAgent(llm);
        const waiting = await started(agent, 10);
        await answer(waiting.token, 'accept', 'yes');
        const executive = createExecutive({
          storage,
          kinds: { [OPENAI_AGENTS_KIND]: openaiAgentsKind({ agent }) },
        });
        await executive.work({ once: true });
        expect(ran).toEqual(['pay 10']);
        const run = await storage.runs().get(waiting.runId);
        expect(run?.status).toBe('completed');
        const transcript = await storage.runs().transcript(waiting.runId);
        expect(JSON.stringify(transcript)).toContain('Done: paid 10');
        // Nothing is left to resume: a second drain runs nothing.
        await executive.work({ once: true });
        expect(ran).toEqual(['pay 10']);
      });

      it('beforeRun hears the restored state, its approval applied, before the tool runs', async () => {
        const { agent, ran } = payingAgent(llm);
        const waiting = await started(agent, 30);
        await answer(waiting.token, 'accept');
        const heard: Array<{ ranBefore: number; approved: boolean | undefined }> = [];
        const kind = openaiAgentsKind({
          agent,
          beforeRun: (state) => {
            const [item] = state.getInterruptions();
            const callId = (item?.rawItem as { callId?: string } | undefined)?.callId ?? '';
            const approved = state._context.isToolApproved({ toolName: 'pay', callId });
            heard.push({ ranBefore: ran.length, approved });
          },
        });
        await createExecutive({ storage, kinds: { [OPENAI_AGENTS_KIND]: kind } }).work({
          once: true,
        });
        expect(heard).toEqual([{ ranBefore: 0, approved: true }]);
        expect(ran).toEqual(['pay 30']);
      });

      it('rejected: the tool does not run and the model is told the reason', async () => {
        const { agent, ran } = payingAgent(llm);
        const waiting = await started(agent, 20);
        await answer(waiting.token, 'decline', 'over budget');
        const kinds = { [OPENAI_AGENTS_KIND]: openaiAgentsKind({ agent }) };
        await createExecutive({ storage, kinds }).work({ once: true });
        expect(ran).toEqual([]);
        expect((await storage.runs().get(waiting.runId))?.status).toBe('completed');
        const told = llm.requests
          .map((r) => JSON.stringify(r.body))
          .find((b) => b.includes('over budget'));
        expect(told).toBeDefined();
        const transcript = await storage.runs().transcript(waiting.runId);
        expect(JSON.stringify(transcript)).toContain('over budget');
      });

      it('approved with changes: the tool does not run and the model is told they were not applied', async () => {
        const { agent, ran } = payingAgent(llm);
        const waiting = await started(agent, 25);
        await answer(waiting.token, 'accept', 'approved with changes: pay 5');
        const kinds = { [OPENAI_AGENTS_KIND]: openaiAgentsKind({ agent }) };
        await createExecutive({ storage, kinds }).work({ once: true });
        expect(ran).toEqual([]);
        const told = llm.requests
          .map((r) => JSON.stringify(r.body))
          .find((b) => b.includes('cannot be applied'));
        expect(told).toContain('pay 5');
        const transcript = JSON.stringify(await storage.runs().transcript(waiting.runId));
        expect(transcript).toContain('with changes, which cannot be applied');
      });

      it('cancelled: the run ends, nothing runs, no question stays open', async () => {
        const { agent, ran } = payingAgent(llm);
        const waiting = await started(agent, 35);
        await answerQuestion(flow(), waiting.token, { action: 'cancel', content: '' });
        const kinds = { [OPENAI_AGENTS_KIND]: openaiAgentsKind({ agent }) };
        await createExecutive({ storage, kinds }).work({ once: true });
        expect(ran).toEqual([]);
        expect((await storage.runs().get(waiting.runId))?.status).toBe('cancelled');
        expect(await storage.pauses().listPending(waiting.conversationId)).toEqual([]);
      });

      it('two workers: the approved run is resumed once, the tool runs once', async () => {
        const { agent, ran } = payingAgent(llm);
        const waiting = await started(agent, 30);
        await answer(waiting.token, 'accept');
        const kinds = { [OPENAI_AGENTS_KIND]: openaiAgentsKind({ agent }) };
        const executives = [1, 2].map(() => createExecutive({ storage, kinds }));
        await Promise.all(executives.map((e) => e.work({ once: true, concurrency: 2 })));
        expect(ran).toEqual(['pay 30']);
        expect((await storage.runs().get(waiting.runId))?.status).toBe('completed');
      });

      it('a new interruption after the resume asks again, then completes', async () => {
        const { agent, ran } = payingAgent(llm, true);
        const waiting = await started(agent, 40);
        await answer(waiting.token, 'accept');
        const kinds = { [OPENAI_AGENTS_KIND]: openaiAgentsKind({ agent }) };
        const executive = createExecutive({ storage, kinds });
        await executive.work({ once: true });
        expect(ran).toEqual(['pay 40']);
        const again = await storage.runs().get(waiting.runId);
        expect(again?.status).toBe('waiting');
        const [next] = await storage.pauses().listPending(waiting.conversationId);
        expect(next?.question).toContain('refund');
        await answer(next?.token ?? '', 'accept');
        await executive.work({ once: true });
        expect(ran).toEqual(['pay 40', 'refund 40']);
        expect((await storage.runs().get(waiting.runId))?.status).toBe('completed');
      });

      it('refuses a stored state that was changed after it was written, running nothing', async () => {
        const { agent, ran } = payingAgent(llm);
        const waiting = await started(agent, 50);
        const run = await storage.runs().get(waiting.runId);
        const token = run?.interactionId ?? '';
        // The continuation's state is edited in the database: the amount raised.
        const { state } = (await storage.continuations().load(token)).toolInput as {
          state: string;
        };
        const forged = state.replaceAll('{\\"amount\\":50}', '{\\"amount\\":5000}');
        expect(forged).not.toBe(state);
        const table = sql`x_continuation.suspensions`;
        const [row] = rowsOf(
          await target.db.execute(sql`select record from ${table} where interaction_id = ${token}`),
        );
        const record = replaced(JSON.parse(String(row?.record)), state, forged);
        await target.db.execute(
          sql`update ${table} set record = ${JSON.stringify(record)} where interaction_id = ${token}`,
        );
        await answer(waiting.token, 'accept');
        await createExecutive({
          storage,
          kinds: { [OPENAI_AGENTS_KIND]: openaiAgentsKind({ agent }) },
        }).work({ once: true });
        expect(ran).toEqual([]);
        const failed = await storage.runs().get(waiting.runId);
        expect(failed?.status).toBe('failed');
        expect(failed?.lastError).toContain('does not match');
      });

      it('refuses a run whose continuation is not an OpenAI Agents state', async () => {
        const { agent, ran } = payingAgent(llm);
        const ids = { runId: fresh('r'), conversationId: fresh('c') };
        const toolUse = { type: 'tool_use' as const, id: 'tu1', name: 'ask_user', input: {} };
        const asking: SuspendedTurn = {
          status: 'suspended',
          messages: [userMessage('Pay 60')],
          assistant: assistantMessage(toolUse),
          toolUse,
          question: { kind: 'ask_user', question: 'Which city?', options: null, priority: 0 },
        };
        const token = fresh('q');
        await suspendNewRun(flow(), ids, { id: 'm' }, asking, { kind: OPENAI_AGENTS_KIND }, token);
        await answer(token, 'accept', 'Kyoto');
        const kinds = { [OPENAI_AGENTS_KIND]: openaiAgentsKind({ agent }) };
        await createExecutive({ storage, kinds }).work({ once: true });
        const failed = await storage.runs().get(ids.runId);
        expect(failed?.status).toBe('failed');
        expect(failed?.lastError).toContain('not an OpenAI Agents run');
        expect(ran).toEqual([]);
      });

      it('two interruptions in one stop: resumed once, when both questions are answered', async () => {
        const two = await startTwoCallServer();
        try {
          const { agent, ran } = payingAgent(two);
          const waiting = await started(agent);
          const pending = await storage.pauses().listPending(waiting.conversationId);
          expect(pending.map((p) => p.question).sort()).toEqual([
            expect.stringContaining('"amount":1'),
            expect.stringContaining('"amount":2'),
          ]);
          const [first, second] = pending.sort((a, b) => a.question.localeCompare(b.question));
          const kinds = { [OPENAI_AGENTS_KIND]: openaiAgentsKind({ agent }) };
          const executive = createExecutive({ storage, kinds });
          // One answer of two: the run is taken, finds a question open, and waits again.
          await answer(first?.token ?? '', 'accept');
          const resumed: RunResult[] = [];
          await executive.work({
            once: true,
            onEvent: (event) => {
              if (event.type === 'run-resumed' && event.job.run.runId === waiting.runId) {
                resumed.push(event.result);
              }
            },
          });
          expect(resumed.map((r) => r.status)).toEqual(['waiting']);
          expect(ran).toEqual([]);
          expect((await storage.runs().get(waiting.runId))?.status).toBe('waiting');
          await answer(second?.token ?? '', 'decline', 'one payment is enough');
          await executive.work({ once: true });
          expect(ran).toEqual(['pay 1']);
          const done = await storage.runs().get(waiting.runId);
          expect(done?.status).toBe('completed');
          const transcript = JSON.stringify(await storage.runs().transcript(waiting.runId));
          expect(transcript).toContain('paid 1');
          expect(transcript).toContain('one payment is enough');
        } finally {
          await two.close();
        }
      });
    });
  }
}
