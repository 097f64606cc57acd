import {
  generateText,
  type LanguageModel,
  type ModelMessage,
  stepCountIs,
  streamText,
  tool,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { z } from 'zod';
import {
  ContinuationError,
  decodeSuspension,
  encodeSuspension,
  type Suspension,
} from '../index.js';
import {
  type AiSdkResumeMessage,
  expiredAnswer,
  expiredModelMessages,
  pendingToolCall,
  resumeModelMessages,
  suspendModelMessages,
} from './index.js';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

type Step = { text: string } | { calls: Array<{ id: string; name: string; input: unknown }> };

function generated(step: Step) {
  return {
    content:
      'text' in step
        ? [{ type: 'text' as const, text: step.text }]
        : step.calls.map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.id,
            toolName: call.name,
            input: JSON.stringify(call.input),
          })),
    finishReason: {
      unified: 'text' in step ? ('stop' as const) : ('tool-calls' as const),
      raw: undefined,
    },
    usage,
    warnings: [],
  };
}

/** A model that answers each call with the next step, recording every prompt it gets. */
function scripted(...steps: Step[]) {
  return new MockLanguageModelV3({ doGenerate: steps.map(generated) });
}

/** The same steps, streamed. */
function streamed(...steps: Step[]) {
  let call = 0;
  return new MockLanguageModelV3({
    doStream: async () => {
      const step = steps[call++] ?? { text: '' };
      const parts: unknown[] =
        'text' in step
          ? [
              { type: 'text-start', id: 't' },
              { type: 'text-delta', id: 't', delta: step.text },
              { type: 'text-end', id: 't' },
            ]
          : generated(step).content;
      const stream = new ReadableStream({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.enqueue({ type: 'finish', finishReason: generated(step).finishReason, usage });
          controller.close();
        },
      });
      return { stream };
    },
  });
}

// What a store does between two processes: the suspension goes through its JSON record.
const persisted = (s: Suspension): Suspension =>
  decodeSuspension(JSON.parse(JSON.stringify(encodeSuspension(s))));

function deployTool(execute = vi.fn(async ({ env }: { env: string }) => `deployed to ${env}`)) {
  return {
    execute,
    tools: {
      deploy: tool({
        description: 'Deploy the build.',
        inputSchema: z.object({ env: z.string() }),
        needsApproval: true,
        execute,
      }),
    },
  };
}

const askUser = tool({
  description: 'Ask the person.',
  inputSchema: z.object({ question: z.string() }),
});

const history: ModelMessage[] = [{ role: 'user', content: 'Ship it' }];

async function suspendedApproval(
  model: LanguageModel,
  tools: ReturnType<typeof deployTool>['tools'],
) {
  const result = await generateText({ model, tools, system: 'S', messages: history });
  const messages = [...history, ...result.response.messages];
  return { result, messages };
}

describe('types match the ai package', () => {
  it('what resumeModelMessages writes is a ModelMessage[], and ModelMessage[] is read as it is', () => {
    expectTypeOf<AiSdkResumeMessage[]>().toExtend<ModelMessage[]>();
    expectTypeOf<ModelMessage[]>().toExtend<Parameters<typeof pendingToolCall>[0]>();
  });
});

describe('a tool that needs approval', () => {
  it('suspends the step, and an approval in a later process runs the tool once and carries on', async () => {
    const { execute, tools } = deployTool();
    const model = scripted(
      { calls: [{ id: 'call_1', name: 'deploy', input: { env: 'prod' } }] },
      { text: 'Deployed.' },
    );
    const { result, messages } = await suspendedApproval(model, tools);
    expect(result.content.some((part) => part.type === 'tool-approval-request')).toBe(true);
    expect(execute).not.toHaveBeenCalled();

    const pending = pendingToolCall(messages);
    expect(pending).toMatchObject({
      kind: 'approval',
      toolCallId: 'call_1',
      toolName: 'deploy',
      input: { env: 'prod' },
    });
    expect(pending?.approvalId).toEqual(expect.any(String));
    const suspension = suspendModelMessages({ interactionId: 'call_1', messages, runId: 'run-1' });
    expect(suspension).toMatchObject({ toolUseId: 'call_1', toolName: 'deploy', runId: 'run-1' });

    const resumed = await generateText({
      model,
      tools,
      system: 'S',
      messages: resumeModelMessages(persisted(suspension), { approved: true }),
    });
    expect(execute).toHaveBeenCalledTimes(1);
    expect(execute.mock.calls[0]?.[0]).toEqual({ env: 'prod' });
    expect(resumed.text).toBe('Deployed.');
    // The model saw its own call answered by the tool's output, and nothing of the approval.
    expect(model.doGenerateCalls[1]?.prompt.slice(1)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Ship it' }], providerOptions: undefined },
      {
        role: 'assistant',
        content: [
          {
            type: 'tool-call',
            toolCallId: 'call_1',
            toolName: 'deploy',
            input: { env: 'prod' },
            providerExecuted: undefined,
            providerOptions: undefined,
          },
        ],
        providerOptions: undefined,
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_1',
            toolName: 'deploy',
            output: { type: 'text', value: 'deployed to prod' },
            providerOptions: undefined,
          },
        ],
        providerOptions: undefined,
      },
    ]);
  });

  it('a denial never runs the tool and tells the model why', async () => {
    const { execute, tools } = deployTool();
    const model = scripted(
      { calls: [{ id: 'call_1', name: 'deploy', input: { env: 'prod' } }] },
      { text: 'Not deployed.' },
    );
    const { messages } = await suspendedApproval(model, tools);
    const suspension = persisted(suspendModelMessages({ interactionId: 'ask-1', messages }));
    const resumed = await generateText({
      model,
      tools,
      messages: resumeModelMessages(suspension, { approved: false, reason: 'not on a Friday' }),
    });
    expect(resumed.text).toBe('Not deployed.');
    expect(execute).not.toHaveBeenCalled();
    const result = model.doGenerateCalls[1]?.prompt.at(-1);
    expect(result).toMatchObject({
      role: 'tool',
      content: [
        { type: 'tool-result', output: { type: 'execution-denied', reason: 'not on a Friday' } },
      ],
    });
  });

  it('at its deadline the default denies, and the model reads that nobody answered in time', async () => {
    const { execute, tools } = deployTool();
    const model = scripted(
      { calls: [{ id: 'call_1', name: 'deploy', input: { env: 'prod' } }] },
      { text: 'Not deployed.' },
    );
    const { messages } = await suspendedApproval(model, tools);
    const suspension = persisted(suspendModelMessages({ interactionId: 'ask-1', messages }));
    const deadline = new Date('2026-12-01T12:00:00Z');
    const answer = expiredAnswer(deadline, { approved: false });
    await generateText({ model, tools, messages: resumeModelMessages(suspension, answer) });
    expect(execute).not.toHaveBeenCalled();
    expect(model.doGenerateCalls[1]?.prompt.at(-1)).toMatchObject(
      denied(
        'No answer came before the deadline (2026-12-01T12:00:00.000Z); the default (deny) was applied.',
      ),
    );
    expect(expiredAnswer(deadline, { output: { city: 'Lisbon' } })).toEqual({
      output:
        'No answer came before the deadline (2026-12-01T12:00:00.000Z); the default was applied: {"city":"Lisbon"}',
    });
    const approving = (() => {
      try {
        return expiredAnswer(deadline, { approved: true });
      } catch (error) {
        return error;
      }
    })();
    expect(ContinuationError.hasCode(approving, 'invalid')).toBe(true);
  });

  it('a deadline kept in the suspension: a late answer is expired, its default resumes the turn', async () => {
    const { execute, tools } = deployTool();
    const model = scripted(
      { calls: [{ id: 'call_1', name: 'deploy', input: { env: 'prod' } }] },
      { text: 'Not deployed.' },
    );
    const { messages } = await suspendedApproval(model, tools);
    const at = new Date('2026-12-01T12:00:00Z');
    const suspension = persisted(
      suspendModelMessages({
        interactionId: 'ask-1',
        messages,
        deadline: { at, answer: { approved: false, reason: 'deploys wait for a person' } },
      }),
    );
    expect(suspension.version).toBe(2);
    const before = new Date(at.getTime() - 1);
    expect(resumeModelMessages(suspension, { approved: true }, { now: before })).toHaveLength(3);
    const late = continuationError(() =>
      resumeModelMessages(suspension, { approved: true }, { now: at }),
    );
    expect(late.code).toBe('expired');
    expect(late.interactionId).toBe('ask-1');
    expect(continuationError(() => expiredModelMessages(suspension, { now: before })).field).toBe(
      'deadline.at',
    );
    await generateText({
      model,
      tools,
      messages: expiredModelMessages(suspension, { now: at }),
    });
    expect(execute).not.toHaveBeenCalled();
    expect(model.doGenerateCalls[1]?.prompt.at(-1)).toMatchObject(
      denied(
        'No answer came before the deadline (2026-12-01T12:00:00.000Z); the default (deny) was applied: deploys wait for a person',
      ),
    );
    const resolved = { ...suspension, resolved: true };
    expect(continuationError(() => expiredModelMessages(resolved, { now: at })).code).toBe(
      'already_resolved',
    );
  });

  it('a deadline cannot default to an approval, and a suspension without one has no default', async () => {
    const { tools } = deployTool();
    const model = scripted({ calls: [{ id: 'call_1', name: 'deploy', input: { env: 'prod' } }] });
    const { messages } = await suspendedApproval(model, tools);
    const at = new Date('2026-12-01T12:00:00Z');
    const approving = continuationError(() =>
      suspendModelMessages({
        interactionId: 'ask-1',
        messages,
        deadline: { at, answer: { approved: true } },
      }),
    );
    expect([approving.code, approving.field]).toEqual(['invalid', 'deadline.answer']);
    const plain = persisted(suspendModelMessages({ interactionId: 'ask-1', messages }));
    expect(plain.version).toBe(1);
    expect(continuationError(() => expiredModelMessages(plain, { now: at })).field).toBe(
      'deadline',
    );
    // Without a deadline an answer is never late.
    expect(resumeModelMessages(plain, { approved: false }, { now: new Date(9e15) })).toHaveLength(
      3,
    );
  });

  it('works the same through streamText', async () => {
    const { execute, tools } = deployTool();
    const model = streamed(
      { calls: [{ id: 'call_1', name: 'deploy', input: { env: 'prod' } }] },
      { text: 'Deployed.' },
    );
    const first = streamText({ model, tools, messages: history });
    const messages = [...history, ...(await first.response).messages];
    const suspension = persisted(suspendModelMessages({ interactionId: 'call_1', messages }));
    const resumed = streamText({
      model,
      tools,
      messages: resumeModelMessages(suspension, { approved: true }),
    });
    expect(await resumed.text).toBe('Deployed.');
    expect(execute).toHaveBeenCalledTimes(1);
  });
});

describe('a client-side tool (no execute)', () => {
  it('suspends the step, and its output in a later process resumes the turn', async () => {
    const model = scripted(
      { calls: [{ id: 'call_9', name: 'ask_user', input: { question: 'Where to?' } }] },
      { text: 'Lisbon it is.' },
    );
    const tools = { ask_user: askUser };
    const first = await generateText({ model, tools, messages: history, stopWhen: stepCountIs(5) });
    const messages = [...history, ...first.response.messages];
    expect(pendingToolCall(messages)).toEqual({
      kind: 'client-tool',
      toolCallId: 'call_9',
      toolName: 'ask_user',
      input: { question: 'Where to?' },
    });
    const suspension = persisted(suspendModelMessages({ interactionId: 'call_9', messages }));
    const resumed = await generateText({
      model,
      tools,
      messages: resumeModelMessages(suspension, { output: { city: 'Lisbon' } }),
    });
    expect(resumed.text).toBe('Lisbon it is.');
    expect(model.doGenerateCalls[1]?.prompt.at(-1)).toMatchObject({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_9',
          output: { type: 'text', value: '{"city":"Lisbon"}' },
        },
      ],
    });
    const timed = persisted(
      suspendModelMessages({
        interactionId: 'call_9',
        messages,
        deadline: { at: new Date('2026-12-01T12:00:00Z'), answer: { output: { city: 'Porto' } } },
      }),
    );
    expect(
      expiredModelMessages(timed, { now: new Date('2026-12-02T00:00:00Z') }).at(-1),
    ).toMatchObject({
      content: [
        {
          type: 'tool-result',
          output: {
            type: 'text',
            value:
              'No answer came before the deadline (2026-12-01T12:00:00.000Z); the default was applied: {"city":"Porto"}',
          },
        },
      ],
    });
    const failed = resumeModelMessages(suspension, { output: 'no answer', isError: true }).at(-1);
    expect(failed).toMatchObject({
      content: [{ output: { type: 'error-text', value: 'no answer' } }],
    });
  });
});

/** The tool message the model reads for a denied call, with that reason. */
function denied(reason: string) {
  return { content: [{ type: 'tool-result', output: { type: 'execution-denied', reason } }] };
}

function continuationError(fn: () => unknown): ContinuationError {
  try {
    fn();
  } catch (error) {
    if (ContinuationError.is(error)) return error;
    throw error;
  }
  throw new Error('expected a ContinuationError');
}

describe('refusals', () => {
  const call = (id: string, name = 'ask_user') => ({
    type: 'tool-call' as const,
    toolCallId: id,
    toolName: name,
    input: {},
  });

  it('nothing waits: no pending call, and nothing to suspend', () => {
    const done: ModelMessage[] = [
      ...history,
      { role: 'assistant', content: [call('a')] },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'a',
            toolName: 'ask_user',
            output: { type: 'text', value: 'x' },
          },
        ],
      },
      { role: 'assistant', content: 'Done.' },
    ];
    expect(pendingToolCall(done)).toBeUndefined();
    const error = continuationError(() =>
      suspendModelMessages({ interactionId: 'i', messages: done }),
    );
    expect(error.code).toBe('invalid');
    expect(error.field).toBe('messages');
  });

  it('a step with several tool calls is not a singleton', () => {
    const two: ModelMessage[] = [
      ...history,
      { role: 'assistant', content: [call('a'), call('b')] },
    ];
    expect(continuationError(() => pendingToolCall(two)).code).toBe('not_singleton');
    // The AI SDK ran one sibling; the other waits: resuming would lose the sibling's place.
    const ranOne: ModelMessage[] = [
      ...history,
      { role: 'assistant', content: [call('a', 'search'), call('b')] },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'a',
            toolName: 'search',
            output: { type: 'text', value: 'x' },
          },
        ],
      },
    ];
    const error = continuationError(() =>
      suspendModelMessages({ interactionId: 'i', messages: ranOne }),
    );
    expect(error.code).toBe('not_singleton');
    expect(error.message).toContain('disableParallelToolUse');
  });

  it('a system message inside messages is refused: it belongs in the system option', () => {
    const error = continuationError(() =>
      suspendModelMessages({
        interactionId: 'i',
        messages: [
          { role: 'system', content: 'S' },
          ...history,
          { role: 'assistant', content: [call('a')] },
        ],
      }),
    );
    expect(error.code).toBe('invalid');
    expect(error.message).toContain('system');
  });

  it('a malformed answer or a resolved suspension', () => {
    const suspension = suspendModelMessages({
      interactionId: 'i',
      messages: [...history, { role: 'assistant', content: [call('a')] }],
    });
    expect(
      continuationError(() => resumeModelMessages(suspension, { approved: 'yes' } as never)).field,
    ).toBe('answer');
    expect(
      continuationError(() => resumeModelMessages(suspension, { output: () => 1 } as never)).code,
    ).toBe('invalid');
    const resolved = { ...suspension, resolved: true };
    expect(continuationError(() => resumeModelMessages(resolved, { approved: true })).code).toBe(
      'already_resolved',
    );
    expect(continuationError(() => resumeModelMessages(resolved, { output: 'x' })).code).toBe(
      'already_resolved',
    );
  });
});
