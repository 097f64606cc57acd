import {
  type AssistantMessage,
  assistantMessage,
  type JsonValue,
  type Message,
  textOf,
  toolResults,
  userMessage,
} from '@x/wire';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type EffectLog,
  type GatedResult,
  type GatedResults,
  type GatedTools,
  gatedCallResult,
  type Model,
  type ModelRequest,
  type OrdinaryTools,
  runTurn,
} from './index.js';

/** A model that answers each call with the next of its replies, given what it was sent. */
class ListModel implements Model {
  readonly id = 'test:list';
  readonly requests: ModelRequest[] = [];
  #next = 0;

  constructor(private readonly replies: Array<(request: ModelRequest) => AssistantMessage>) {}

  async generate(request: ModelRequest): Promise<AssistantMessage> {
    this.requests.push(request);
    const reply = this.replies[this.#next++];
    if (!reply) throw new Error(`no reply scripted for call ${this.#next}`);
    return reply(request);
  }
}

/** The text of the tool result the last message of a request carries. */
function lastToolResult(request: ModelRequest): string {
  const last = request.messages.at(-1) as Message;
  const [result] = toolResults(last);
  return typeof result?.content === 'string' ? result.content : JSON.stringify(result?.content);
}

const use = (id: string, name: string, input: JsonValue) => ({
  type: 'tool_use' as const,
  id,
  name,
  input,
});

const observer = { event: () => {} };

const tools: OrdinaryTools = {
  add: {
    description: 'Adds numbers.',
    input: z.object({ numbers: z.array(z.number()) }),
    run: (input) => String((input as { numbers: number[] }).numbers.reduce((a, b) => a + b, 0)),
  },
};

/** An effect log kept in memory: the first call with a key has the effect. */
class MemoryEffects implements EffectLog {
  readonly effects = new Map<string, { tool: string; input: unknown; invocations: number }>();

  async apply(key: string, tool: string, input: unknown) {
    const effect = this.effects.get(key) ?? { tool, input, invocations: 0 };
    effect.invocations++;
    this.effects.set(key, effect);
    return { invocations: effect.invocations };
  }
}

/** Results recorded in memory: the first record of a token stands. */
class MemoryResults implements GatedResults {
  readonly records = new Map<string, GatedResult>();

  async result(token: string) {
    return this.records.get(token);
  }

  async record(given: GatedResult) {
    if (!this.records.has(given.token)) this.records.set(given.token, given);
    return this.records.get(given.token) as GatedResult;
  }
}

function payTool(runs: string[]): GatedTools {
  return {
    pay: {
      description: 'Pays an amount.',
      input: z.object({ to: z.string(), amount: z.number().positive() }).strict(),
      run: async (input, context) => {
        const { to, amount } = input as { to: string; amount: number };
        runs.push(context.key);
        await context.effects.apply(context.key, 'pay', input);
        return `paid ${amount} to ${to}`;
      },
    },
  };
}

describe('runTurn', () => {
  it('runs an ordinary tool the model calls and completes with its answer', async () => {
    const model = new ListModel([
      () => assistantMessage(use('t1', 'add', { numbers: [2, 3] })),
      (request) => assistantMessage(`The sum is ${lastToolResult(request)}.`),
    ]);
    const outcome = await runTurn(model, [userMessage('2 + 3?')], observer, {
      system: 'You add.',
      tools,
    });
    expect(outcome.status).toBe('completed');
    expect(textOf(outcome.messages.at(-1) as Message)).toBe('The sum is 5.');
    expect(model.requests[0]?.tools.map((t) => t.name)).toEqual(['ask_user', 'approve', 'add']);
  });
});

describe('gated tools', () => {
  it('a call suspends on its approval and, once approved, runs once with the token as key', async () => {
    const runs: string[] = [];
    const gated = payTool(runs);
    const model = new ListModel([
      () => assistantMessage(use('t1', 'pay', { to: 'ACME', amount: 40 })),
      (request) => assistantMessage(`Done: ${lastToolResult(request)}`),
    ]);
    const options = { system: 'You pay.', tools, gated };
    const asked = await runTurn(model, [userMessage('Pay ACME 40')], observer, options);
    if (asked.status !== 'suspended') throw new Error(`expected suspended, got ${asked.status}`);
    expect(asked.question.kind).toBe('approve');
    expect(asked.question.gated).toEqual({ tool: 'pay', arguments: { to: 'ACME', amount: 40 } });
    expect(runs).toEqual([]);

    const effects = new MemoryEffects();
    const results = new MemoryResults();
    const approve = () =>
      gatedCallResult(
        gated,
        asked.toolUse,
        { action: 'accept', content: '' },
        {
          token: 'q-1',
          effects,
          results,
        },
      );
    const result = await approve();
    // A second attempt (a retried resume) reads the recorded result and runs nothing.
    expect(await approve()).toEqual(result);
    expect(runs).toEqual(['q-1']);
    expect(effects.effects.get('q-1')).toEqual({
      tool: 'pay',
      input: { to: 'ACME', amount: 40 },
      invocations: 1,
    });
    expect(results.records.get('q-1')?.result).toBe('paid 40 to ACME');

    const resumed = [...asked.messages, asked.assistant, userMessage(result)];
    const done = await runTurn(model, resumed, observer, options);
    expect(done.status).toBe('completed');
    expect(textOf(done.messages.at(-1) as Message)).toBe('Done: paid 40 to ACME');
  });

  it('a declined call does not run, and the model reads the reason', async () => {
    const runs: string[] = [];
    const gated = payTool(runs);
    const model = new ListModel([
      () => assistantMessage(use('t1', 'pay', { to: 'ACME', amount: 4000 })),
      (request) => assistantMessage(`Not paid: ${lastToolResult(request)}`),
    ]);
    const options = { system: 'You pay.', tools, gated };
    const asked = await runTurn(model, [userMessage('Pay ACME 4000')], observer, options);
    if (asked.status !== 'suspended') throw new Error(`expected suspended, got ${asked.status}`);
    const effects = new MemoryEffects();
    const results = new MemoryResults();
    const answer = { action: 'decline' as const, content: 'over the monthly limit' };
    const result = await gatedCallResult(gated, asked.toolUse, answer, {
      token: 'q-2',
      effects,
      results,
    });
    const done = await runTurn(
      model,
      [...asked.messages, asked.assistant, userMessage(result)],
      observer,
      options,
    );
    expect(runs).toEqual([]);
    expect(effects.effects.size).toBe(0);
    expect(textOf(done.messages.at(-1) as Message)).toContain('over the monthly limit');
    expect(lastToolResult(model.requests[1] as ModelRequest)).toBe(
      "The user declined: over the monthly limit (a person's decision: pay was not run.)",
    );
  });
});
