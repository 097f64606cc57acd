import { readFileSync } from 'node:fs';
import type { Message } from '@x/wire';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CHECKPOINT_VERSION,
  Checkpointer,
  isReservedRuntimeStateKey,
  type PendingToolCall,
  parseCheckpoint,
  type SessionCheckpoint,
  SessionError,
  SessionManager,
  serializeCheckpoint,
  type Todo,
} from './index.js';

const fixtureUrl = new URL('../test/fixtures/checkpoint-v1.json', import.meta.url);
// Written before keys were sorted at every depth (the plan's keys came after the user keys).
const plansLastUrl = new URL('../test/fixtures/checkpoint-v1-plan-keys-last.json', import.meta.url);

/** True when every object in `value`, at every depth, lists its keys in canonical order. */
function keysSorted(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(keysSorted);
  if (typeof value !== 'object' || value === null) return true;
  const keys = Object.keys(value);
  return (
    keys.join('\u0000') === [...keys].sort().join('\u0000') &&
    Object.values(value).every(keysSorted)
  );
}

/** The session the golden fixture pins. */
function goldenInputs() {
  const session = new SessionManager();
  session.stateSet('zeta', { nested: [1, 2.5, 'three', null, false] });
  session.stateSet('alpha', 'first');
  // Built with keys out of order at several depths: the fixture pins them sorted.
  session.stateSet('prefs', { seats: ['aisle'], n: 2, meal: { vegan: true, allergies: [] } });
  session.stateSet('_search_namespace', 'legacy, never exported');
  session.plan().set([
    { id: 't1', content: 'Find the bug', status: 'completed' },
    { id: 't2', content: 'Fix it', status: 'in_progress' },
  ]);
  session.plan().setDocument('1. Find\n2. Fix');
  session.raiseInterrupt('toolu_ask', 'ask_user', { question: 'Which branch?' });
  session.raiseInterrupt(
    'toolu_task',
    'approval',
    { action: 'deploy', env: { region: 'eu', cluster: 'b' } },
    ['child_toolu_1'],
  );
  session.raiseInterrupt('toolu_done', 'ask_user', { question: 'Name?' });
  session.returnInterrupt('toolu_done', { content: 'Ada', action: 'accept' });
  const window: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'Fix the bug, then deploy.' }] },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Need to ask.', signature: 'sig==' },
        {
          type: 'tool_use',
          id: 'toolu_ask',
          name: 'ask_user',
          input: { question: 'Which branch?' },
        },
        { type: 'tool_use', id: 'toolu_task', name: 'subagent', input: { goal: 'deploy' } },
      ],
    },
  ];
  const pendingToolCalls: Record<string, PendingToolCall> = {
    toolu_task: {
      id: 'toolu_task',
      name: 'subagent',
      input: { goal: 'deploy', limits: { tries: 2, minutes: 5 } },
    },
    toolu_ask: { id: 'toolu_ask', name: 'ask_user', input: { question: 'Which branch?' } },
  };
  const interruptToRequester = { toolu_task: 'child_toolu_1' };
  return { session, window, pendingToolCalls, interruptToRequester };
}

describe('Checkpointer golden format', () => {
  // The fixture is committed; `vitest -u` rewrites it only when the format change is intended
  // (and then CHECKPOINT_VERSION and an upgrade step must change too).
  it('capture produces exactly the committed version-1 JSON', async () => {
    const { session, window, pendingToolCalls, interruptToRequester } = goldenInputs();
    const checkpoint = new Checkpointer().capture(
      window,
      session,
      pendingToolCalls,
      interruptToRequester,
    );
    const json = `${JSON.stringify(checkpoint, null, 2)}\n`;
    await expect(json).toMatchFileSnapshot('../test/fixtures/checkpoint-v1.json');
    expect(serializeCheckpoint(checkpoint)).toBe(JSON.stringify(JSON.parse(json)));
  });

  it('the committed fixture still parses and applies to the same session', () => {
    const checkpoint = parseCheckpoint(readFileSync(fixtureUrl, 'utf8'));
    const session = new SessionManager();
    const applied = new Checkpointer().apply(checkpoint, session);
    const golden = goldenInputs();
    expect(applied.window).toEqual(golden.window);
    expect(applied.pendingToolCalls).toEqual(golden.pendingToolCalls);
    expect(applied.interruptToRequester).toEqual(golden.interruptToRequester);
    expect(session.stateGet('alpha')).toBe('first');
    expect(session.stateGet('_search_namespace')).toBeUndefined();
    expect(session.plan().get()).toEqual(golden.session.plan().get());
    expect(session.plan().document()).toBe('1. Find\n2. Fix');
    expect(session.pendingInterrupt('toolu_task')?.requesters).toEqual(['child_toolu_1']);
    expect(session.takeResolvedInterrupt('toolu_done')?.result).toEqual({
      action: 'accept',
      content: 'Ada',
    });
  });

  it('a version-1 checkpoint written before keys were sorted everywhere still reads, and re-captures sorted', () => {
    const text = readFileSync(plansLastUrl, 'utf8');
    const checkpoint = parseCheckpoint(text);
    const session = new SessionManager();
    const applied = new Checkpointer().apply(checkpoint, session);
    expect(session.stateGet('zeta')).toEqual({ nested: [1, 2.5, 'three', null, false] });
    expect(session.plan().document()).toBe('1. Find\n2. Fix');
    expect(session.pendingInterrupt('toolu_task')?.requesters).toEqual(['child_toolu_1']);
    const again = new Checkpointer().capture(
      applied.window,
      session,
      applied.pendingToolCalls,
      applied.interruptToRequester,
    );
    expect(again).toEqual(JSON.parse(text));
    expect(Object.keys(again.runtimeState)).toEqual([
      '_plan_document',
      '_plan_todos',
      'alpha',
      'zeta',
    ]);
  });

  it('sorts the keys of state values, payloads, results and pending tool inputs at every depth', () => {
    const { session, window, pendingToolCalls, interruptToRequester } = goldenInputs();
    const checkpoint = new Checkpointer().capture(
      window,
      session,
      pendingToolCalls,
      interruptToRequester,
    );
    const { window: _kept, ...rest } = checkpoint;
    // Interrupts and pending calls are records of a fixed shape: their own fields stay in
    // schema order; everything free-form inside them is sorted.
    const { _plan_todos: todos, ...user } = rest.runtimeState;
    expect(keysSorted(user)).toBe(true);
    // A todo is a record of a fixed shape too.
    expect(Object.keys((todos as object[])[0] ?? {})).toEqual(['id', 'content', 'status']);
    expect(Object.keys(rest.runtimeState)).toEqual([...Object.keys(rest.runtimeState)].sort());
    for (const map of [rest.interrupts.pending, rest.interrupts.resolved]) {
      for (const interrupt of Object.values(map)) {
        expect(keysSorted(interrupt.payload) && keysSorted(interrupt.result ?? null)).toBe(true);
      }
    }
    for (const call of Object.values(rest.pendingToolCalls))
      expect(keysSorted(call.input)).toBe(true);
    expect(JSON.stringify(checkpoint.runtimeState.prefs)).toBe(
      '{"meal":{"allergies":[],"vegan":true},"n":2,"seats":["aisle"]}',
    );
  });

  it('capture is pure: it does not change the session or the maps it is given', () => {
    const { session, window, pendingToolCalls, interruptToRequester } = goldenInputs();
    const before = JSON.stringify([
      session.snapshotDurable(),
      window,
      pendingToolCalls,
      interruptToRequester,
    ]);
    const checkpoint = new Checkpointer().capture(
      window,
      session,
      pendingToolCalls,
      interruptToRequester,
    );
    checkpoint.window.pop();
    checkpoint.pendingToolCalls.toolu_ask!.name = 'changed';
    checkpoint.interrupts.pending.toolu_ask!.payload = 'changed';
    expect(
      JSON.stringify([session.snapshotDurable(), window, pendingToolCalls, interruptToRequester]),
    ).toBe(before);
  });

  it('apply replaces the session state and returns copies', () => {
    const { session, window, pendingToolCalls, interruptToRequester } = goldenInputs();
    const checkpoint = new Checkpointer().capture(
      window,
      session,
      pendingToolCalls,
      interruptToRequester,
    );
    const target = new SessionManager();
    target.stateSet('old', 1);
    target.raiseInterrupt('old_call', 'k', null);
    const applied = new Checkpointer().apply(checkpoint, target);
    expect(target.stateGet('old')).toBeUndefined();
    expect(target.pendingInterrupt('old_call')).toBeUndefined();
    applied.interruptToRequester.toolu_task = 'x';
    expect(checkpoint.interruptToRequester.toolu_task).toBe('child_toolu_1');
  });
});

describe('checkpoint versions and validation', () => {
  const base = () => {
    const { session, window, pendingToolCalls, interruptToRequester } = goldenInputs();
    return new Checkpointer().capture(window, session, pendingToolCalls, interruptToRequester);
  };

  it('writes the current version', () => {
    expect(base().version).toBe(CHECKPOINT_VERSION);
    expect(CHECKPOINT_VERSION).toBe(1);
  });

  it('refuses a newer version clearly, before looking at anything else', () => {
    for (const input of [
      { ...base(), version: 2 },
      { version: 7, whatever: true },
      '{"version": 3}',
    ]) {
      let error: unknown;
      try {
        parseCheckpoint(input);
      } catch (caught) {
        error = caught;
      }
      expect(SessionError.hasCode(error, 'unsupported_version')).toBe(true);
      expect((error as Error).message).toMatch(
        /^\[@x\/session\] checkpoint version \d+ is newer .* upgrade @x\/session/,
      );
    }
  });

  it('apply of a newer version is refused and leaves the session untouched', () => {
    const session = new SessionManager();
    session.stateSet('keep', 1);
    const newer = { ...base(), version: 2 } as unknown as SessionCheckpoint;
    expect(() => new Checkpointer().apply(newer, session)).toThrow(
      expect.objectContaining({ code: 'unsupported_version' }),
    );
    expect(session.stateGet('keep')).toBe(1);
  });

  it.each([
    ['not JSON', '{'],
    ['not an object', '[]'],
    ['no version', '{}'],
    ['version 0', { ...{ version: 0 } }],
    ['a bad message', { ...base(), window: [{ role: 'system', content: [] }] }],
    [
      'an interrupt under another key',
      {
        ...base(),
        interrupts: {
          pending: { a: { id: 'b', kind: 'k', payload: null, status: 'pending' } },
          resolved: {},
        },
      },
    ],
    [
      'a resolved interrupt among pending ones',
      {
        ...base(),
        interrupts: {
          pending: { a: { id: 'a', kind: 'k', payload: null, status: 'resolved' } },
          resolved: {},
        },
      },
    ],
    ['a malformed plan', { ...base(), runtimeState: { _plan_todos: [{ id: 1 }] } }],
    [
      'a pending tool call under another key',
      { ...base(), pendingToolCalls: { a: { id: 'b', name: 'n', input: null } } },
    ],
  ])('refuses %s with invalid', (_, input) => {
    expect(() => parseCheckpoint(input)).toThrow(expect.objectContaining({ code: 'invalid' }));
  });

  it('apply of an invalid checkpoint changes nothing', () => {
    const session = new SessionManager();
    session.stateSet('keep', 1);
    const bad = {
      ...base(),
      runtimeState: { x: 1, _plan_todos: 'no' },
    } as unknown as SessionCheckpoint;
    expect(() => new Checkpointer().apply(bad, session)).toThrow(SessionError);
    expect(session.stateGet('keep')).toBe(1);
    expect(session.stateGet('x')).toBeUndefined();
  });
});

// --- property: capture → JSON → apply restores an equal session -------------------------

const json = fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)));
const id = fc.stringMatching(/^[a-z0-9_]{1,8}$/);
const todoArb: fc.Arbitrary<Todo> = fc.record({
  id,
  content: fc.string(),
  status: fc.constantFrom('pending', 'in_progress', 'completed'),
});
const messageArb: fc.Arbitrary<Message> = fc.oneof(
  fc.record({
    role: fc.constant('user' as const),
    content: fc.array(fc.record({ type: fc.constant('text' as const), text: fc.string() }), {
      maxLength: 3,
    }),
  }),
  fc.record({
    role: fc.constant('assistant' as const),
    content: fc.array(
      fc.oneof(
        fc.record({ type: fc.constant('text' as const), text: fc.string() }),
        fc.record({ type: fc.constant('tool_use' as const), id, name: id, input: json }),
      ),
      { maxLength: 3 },
    ),
  }),
);
const sessionArb = fc.record({
  state: fc.dictionary(
    fc.string().filter((k) => !isReservedRuntimeStateKey(k) && k !== '__proto__'),
    json,
    { maxKeys: 6 },
  ),
  todos: fc.option(fc.array(todoArb, { maxLength: 4 }), { nil: null }),
  document: fc.string(),
  interrupts: fc.uniqueArray(
    fc.record({
      id,
      kind: id,
      payload: json,
      result: fc.option(json, { nil: undefined }),
      requesters: fc.option(fc.array(id, { minLength: 1, maxLength: 2 }), { nil: undefined }),
    }),
    { selector: (i) => i.id, maxLength: 4 },
  ),
  window: fc.array(messageArb, { maxLength: 5 }),
  pendingToolCalls: fc.uniqueArray(fc.record({ id, name: id, input: json }), {
    selector: (c) => c.id,
    maxLength: 3,
  }),
  interruptToRequester: fc.dictionary(id, id, { maxKeys: 3 }),
});

describe('capture → JSON → apply', () => {
  it('property: restores an equal session (byte-equal re-capture)', () => {
    fc.assert(
      fc.property(sessionArb, (input) => {
        const session = new SessionManager();
        for (const [key, value] of Object.entries(input.state)) session.stateSet(key, value);
        session.plan().set(input.todos);
        session.plan().setDocument(input.document);
        for (const i of input.interrupts) {
          session.raiseInterrupt(i.id, i.kind, i.payload, i.requesters);
          if (i.result !== undefined) session.returnInterrupt(i.id, i.result);
        }
        const pendingToolCalls = Object.fromEntries(input.pendingToolCalls.map((c) => [c.id, c]));
        const checkpointer = new Checkpointer();
        const captured = checkpointer.capture(
          input.window,
          session,
          pendingToolCalls,
          input.interruptToRequester,
        );
        const text = serializeCheckpoint(captured);

        const restored = new SessionManager();
        const applied = checkpointer.apply(parseCheckpoint(text), restored);
        expect(applied.window).toEqual(input.window);
        expect(applied.pendingToolCalls).toEqual(pendingToolCalls);
        expect(applied.interruptToRequester).toEqual(input.interruptToRequester);
        expect(restored.plan().get()).toEqual(input.todos);
        expect(restored.plan().document()).toBe(input.document);
        for (const [key, value] of Object.entries(input.state))
          expect(restored.stateGet(key)).toEqual(value);
        const again = checkpointer.capture(
          applied.window,
          restored,
          applied.pendingToolCalls,
          applied.interruptToRequester,
        );
        expect(serializeCheckpoint(again)).toBe(text);
      }),
      { numRuns: 200 },
    );
  });
});
