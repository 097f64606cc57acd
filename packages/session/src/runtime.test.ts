import type { StreamEvent } from '@x/wire';
import { describe, expect, it } from 'vitest';
import {
  Checkpointer,
  createEventChannel,
  createRuntime,
  MemoryCheckpointStore,
  Runtime,
  SessionError,
  SessionManager,
} from './index.js';

function setup() {
  const session = new SessionManager();
  const events: StreamEvent[] = [];
  const sink = { emit: (e: StreamEvent) => events.push(e), close() {}, closed: false };
  const runtime = createRuntime({ session, events: sink });
  return { session, events, runtime };
}

describe('createRuntime', () => {
  it.each<[string, unknown, string | undefined]>([
    ['no options', undefined, undefined],
    ['no session', { events: createEventChannel().sink }, 'session'],
    ['no event sink', { session: new SessionManager() }, 'events'],
    ['a session that is not one', { session: {}, events: createEventChannel().sink }, 'session'],
    ['a sink without emit', { session: new SessionManager(), events: {} }, 'events'],
    [
      'a store that is not one',
      { session: new SessionManager(), events: createEventChannel().sink, store: 5 },
      'store',
    ],
  ])('refuses %s at construction with invalid', (_name, options, field) => {
    let error: unknown;
    try {
      createRuntime(options as never);
    } catch (caught) {
      error = caught;
    }
    expect(SessionError.hasCode(error, 'invalid')).toBe(true);
    expect((error as SessionError).message).toMatch(/^\[@x\/session\] createRuntime /);
    if (field) expect((error as SessionError).details.path).toEqual([field]);
    expect(() => new Runtime(options as never)).toThrow(SessionError);
  });

  it('so raiseInterrupt can never park an interrupt and then fail on a missing sink', () => {
    const session = new SessionManager();
    expect(() => createRuntime({ session } as never)).toThrow(SessionError);
    expect(session.hasPendingInterrupt()).toBe(false);
  });
});

describe('Runtime', () => {
  it('carries the store and the current tool call id; withToolCall shares sink and session', () => {
    const store = new MemoryCheckpointStore();
    const { session, events } = setup();
    const sink = { emit: (e: StreamEvent) => events.push(e), close() {}, closed: false };
    const runtime = createRuntime({ session, events: sink, store });
    expect(runtime).toBeInstanceOf(Runtime);
    expect(runtime.store).toBe(store);
    expect(runtime.currentToolCallId).toBeUndefined();
    const tool = runtime.withToolCall('call_1');
    expect(tool.currentToolCallId).toBe('call_1');
    expect(tool.store).toBe(store);
    tool.stateSet('k', 1);
    expect(runtime.stateGet('k')).toBe(1);
    tool.emitUpdate('x');
    expect(events).toEqual([{ type: 'tool-progress', toolCallId: 'call_1', message: 'x' }]);
  });

  it('emitUpdate sends tool progress for the current call; outside a call it is no_current_tool_call', () => {
    const { runtime, events } = setup();
    expect(() => runtime.emitUpdate('x')).toThrow(
      expect.objectContaining({ code: 'no_current_tool_call' }),
    );
    runtime.withToolCall('c').emitUpdate('50%');
    expect(events).toEqual([{ type: 'tool-progress', toolCallId: 'c', message: '50%' }]);
  });

  it('emitPlanUpdate sends a copy of the plan', () => {
    const { runtime, events } = setup();
    const plan = [{ id: '1', content: 'x', status: 'pending' as const }];
    runtime.emitPlanUpdate(plan);
    plan[0]!.content = 'changed';
    expect(events).toEqual([
      { type: 'plan-updated', todos: [{ id: '1', content: 'x', status: 'pending' }] },
    ]);
  });

  it('state get/set/delete go to the session, which outlives the Runtime', () => {
    const { runtime, session } = setup();
    runtime.stateSet('k', { v: 1 });
    expect(session.stateGet('k')).toEqual({ v: 1 });
    const next = createRuntime({ session, events: createEventChannel().sink });
    expect(next.stateGet('k')).toEqual({ v: 1 });
    next.stateDelete('k');
    expect(session.stateGet('k')).toBeUndefined();
  });

  it('raiseInterrupt parks the current tool call and emits interrupt-raised', () => {
    const { runtime, events, session } = setup();
    const tool = runtime.withToolCall('call_1');
    const raised = tool.raiseInterrupt('ask_user', { question: 'Proceed?' });
    expect(raised).toEqual({
      id: 'call_1',
      kind: 'ask_user',
      payload: { question: 'Proceed?' },
      status: 'pending',
    });
    expect(tool.hasPendingInterrupt()).toBe(true);
    expect(session.hasPendingInterrupt()).toBe(true);
    expect(tool.pendingInterrupt('call_1')).toEqual(raised);
    expect(events).toEqual([
      {
        type: 'interrupt-raised',
        toolCallId: 'call_1',
        kind: 'ask_user',
        payload: { question: 'Proceed?' },
      },
    ]);
  });

  it('raiseInterrupt without a current tool call is no_current_tool_call', () => {
    const { runtime, session } = setup();
    expect(() => runtime.raiseInterrupt('ask_user', null)).toThrow(
      expect.objectContaining({ code: 'no_current_tool_call' }),
    );
    expect(session.hasPendingInterrupt()).toBe(false);
  });

  it('a second raise on the same tool call is interrupt_pending', () => {
    const { runtime } = setup();
    const tool = runtime.withToolCall('call_1');
    tool.raiseInterrupt('ask_user', 1);
    expect(() => tool.raiseInterrupt('ask_user', 2)).toThrow(
      expect.objectContaining({ code: 'interrupt_pending' }),
    );
    expect(tool.pendingInterrupt('call_1')?.payload).toBe(1);
  });

  it('full lifecycle: raise → return (emits interrupt-resolved) → take once → re-raise allowed', () => {
    const { runtime, events } = setup();
    const tool = runtime.withToolCall('call_1');
    tool.raiseInterrupt('approval', { action: 'deploy' });
    const resolved = runtime.returnInterrupt('call_1', { approved: true });
    expect(resolved.status).toBe('resolved');
    expect(events.at(-1)).toEqual({
      type: 'interrupt-resolved',
      toolCallId: 'call_1',
      result: { approved: true },
    });
    expect(runtime.hasPendingInterrupt()).toBe(false);
    expect(() => runtime.returnInterrupt('call_1', 'again')).toThrow(
      expect.objectContaining({ code: 'interrupt_not_found' }),
    );
    expect(tool.takeResolvedInterrupt('call_1')?.result).toEqual({ approved: true });
    expect(tool.takeResolvedInterrupt('call_1')).toBeUndefined();
    expect(tool.raiseInterrupt('approval', 2).status).toBe('pending');
  });

  it('returnInterrupt for an unknown id is interrupt_not_found', () => {
    const { runtime } = setup();
    expect(() => runtime.returnInterrupt('ghost', null)).toThrow(
      expect.objectContaining({ code: 'interrupt_not_found' }),
    );
  });
});

describe('interrupt adoption across a parent and a child session', () => {
  it('routes the host answer from the parent back to the child, also through checkpoints', async () => {
    const parent = new SessionManager();
    const child = new SessionManager();
    const parentEvents: StreamEvent[] = [];
    const sink = { emit: (e: StreamEvent) => parentEvents.push(e), close() {}, closed: false };
    const parentRuntime = createRuntime({ session: parent, events: sink });
    const childRuntime = createRuntime({ session: child, events: createEventChannel().sink });

    // The parent's tool call `call_task` runs a child agent whose tool `child_ask` asks the user.
    const childInterrupt = childRuntime
      .withToolCall('child_ask')
      .raiseInterrupt('ask_user', { question: 'Color?' });
    const adopted = parentRuntime.withToolCall('call_task').adoptInterrupt(childInterrupt);
    expect(adopted).toEqual({
      id: 'call_task',
      kind: 'ask_user',
      payload: { question: 'Color?' },
      status: 'pending',
      requesters: ['child_ask'],
    });
    expect(parentEvents).toEqual([
      {
        type: 'interrupt-raised',
        toolCallId: 'call_task',
        kind: 'ask_user',
        payload: { question: 'Color?' },
      },
    ]);
    const interruptToRequester = { [adopted.id]: adopted.requesters?.[0] ?? '' };

    // Both sessions are checkpointed and restored (e.g. the host process restarts).
    const checkpointer = new Checkpointer();
    const store = new MemoryCheckpointStore();
    await store.put('parent', checkpointer.capture([], parent, {}, interruptToRequester));
    await store.put('child', checkpointer.capture([], child));
    const parent2 = new SessionManager();
    const child2 = new SessionManager();
    const applied = checkpointer.apply((await store.get('parent'))!.checkpoint, parent2);
    checkpointer.apply((await store.get('child'))!.checkpoint, child2);
    expect(applied.interruptToRequester).toEqual({ call_task: 'child_ask' });

    // The host answers the parent; the harness routes the answer to the child.
    parent2.returnInterrupt('call_task', 'blue');
    const answered = parent2.takeResolvedInterrupt('call_task');
    const requester = applied.interruptToRequester[answered!.id]!;
    child2.returnInterrupt(requester, answered!.result ?? null);
    expect(child2.takeResolvedInterrupt('child_ask')?.result).toBe('blue');
    expect(parent2.hasPendingInterrupt()).toBe(false);
    expect(child2.hasPendingInterrupt()).toBe(false);
  });

  it('keeps the whole requester chain through a grandchild', () => {
    const grandchild = createRuntime({
      session: new SessionManager(),
      events: createEventChannel().sink,
    });
    const child = createRuntime({
      session: new SessionManager(),
      events: createEventChannel().sink,
    });
    const parent = createRuntime({
      session: new SessionManager(),
      events: createEventChannel().sink,
    });
    const g = grandchild.withToolCall('g_call').raiseInterrupt('approval', { x: 1 });
    const c = child.withToolCall('c_call').adoptInterrupt(g);
    const p = parent.withToolCall('p_call').adoptInterrupt(c);
    expect(c.requesters).toEqual(['g_call']);
    expect(p.requesters).toEqual(['c_call', 'g_call']);
  });

  it('adoption needs a current tool call, a free call and a pending child interrupt', () => {
    const child = new SessionManager();
    child.raiseInterrupt('child_ask', 'ask_user', null);
    const pendingChild = child.pendingInterrupt('child_ask')!;
    const parent = createRuntime({
      session: new SessionManager(),
      events: createEventChannel().sink,
    });
    expect(() => parent.adoptInterrupt(pendingChild)).toThrow(
      expect.objectContaining({ code: 'no_current_tool_call' }),
    );
    const tool = parent.withToolCall('call_task');
    tool.adoptInterrupt(pendingChild);
    expect(() => tool.adoptInterrupt(pendingChild)).toThrow(
      expect.objectContaining({ code: 'interrupt_pending' }),
    );
    const resolvedChild = child.returnInterrupt('child_ask', 1);
    expect(() => parent.withToolCall('other').adoptInterrupt(resolvedChild)).toThrow(
      expect.objectContaining({ code: 'invalid' }),
    );
  });
});
