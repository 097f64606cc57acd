// Each promise of packages/session/README.md, stated as a property over generated input. The
// store contract is also registered, example by example, by describeCheckpointStore.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type JsonValue, MAX_JSON_DEPTH, type Message, type StreamEvent } from '@x/wire';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { FileCheckpointStore } from './file/index.js';
import {
  Checkpointer,
  type CheckpointStore,
  createEventChannel,
  createRuntime,
  type Interrupt,
  isReservedRuntimeStateKey,
  isSafeThreadId,
  MemoryCheckpointStore,
  type PendingToolCall,
  PlanStore,
  parseCheckpoint,
  type SessionCheckpoint,
  SessionError,
  type SessionErrorCode,
  SessionManager,
  serializeCheckpoint,
  stripPlanKeys,
  type Todo,
} from './index.js';

/** What a call threw (`undefined` when it returned), never rethrown. */
function outcome(fn: () => unknown): unknown {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error;
  }
}

const CODES: SessionErrorCode[] = [
  'no_current_tool_call',
  'interrupt_pending',
  'interrupt_not_found',
  'conflict',
  'invalid',
  'unsupported_version',
  'unsafe_id',
  'not_found',
  'unavailable',
];

/** A SessionError with a code of the closed union and a message saying where it comes from. */
function expectSessionError(error: unknown, code?: SessionErrorCode): void {
  if (!SessionError.is(error)) throw new Error(`expected a SessionError, got ${String(error)}`);
  expect(CODES).toContain(error.code);
  expect(error.message).toMatch(/^\[@x\/session\] /);
  if (code) expect(error.code).toBe(code);
}

// ---- arbitraries -----------------------------------------------------------------------

/** JSON values as JSON.parse gives them (no -0). */
const json: fc.Arbitrary<JsonValue> = fc
  .jsonValue({ maxDepth: 3 })
  .map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);
const id = fc.stringMatching(/^[a-z0-9_]{1,8}$/);
const userKey = fc.string().filter((k) => !isReservedRuntimeStateKey(k) && k !== '__proto__');
const todo: fc.Arbitrary<Todo> = fc.record({
  id,
  content: fc.string(),
  status: fc.constantFrom('pending', 'in_progress', 'completed'),
});
const message: fc.Arbitrary<Message> = fc.oneof(
  fc.record({
    role: fc.constant('user' as const),
    content: fc.array(fc.record({ type: fc.constant('text' as const), text: fc.string() }), {
      maxLength: 2,
    }),
  }),
  fc.record({
    role: fc.constant('assistant' as const),
    content: fc.array(
      fc.record({ type: fc.constant('tool_use' as const), id, name: id, input: json }),
      { maxLength: 2 },
    ),
  }),
);
const sessionInput = fc.record({
  state: fc.dictionary(userKey, json, { maxKeys: 5 }),
  todos: fc.option(fc.array(todo, { maxLength: 3 }), { nil: null }),
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
  window: fc.array(message, { maxLength: 3 }),
  pendingToolCalls: fc.uniqueArray(fc.record({ id, name: id, input: json }), {
    selector: (c) => c.id,
    maxLength: 3,
  }),
  interruptToRequester: fc.dictionary(id, id, { maxKeys: 3 }),
});
type SessionInput = typeof sessionInput extends fc.Arbitrary<infer T> ? T : never;

/** A small deterministic generator, so one seed gives one shuffle. */
function random(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r ^= r + Math.imul(r ^ (r >>> 7), 61 | r);
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(list: readonly T[], next: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** A deep copy of `value` with the keys of every object, at every depth, in another order. */
function shuffleKeys<T>(value: T, next: () => number): T {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, next)) as T;
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    shuffled(Object.keys(value), next).map((k) => [
      k,
      shuffleKeys((value as Record<string, unknown>)[k], next),
    ]),
  ) as T;
}

/** The session and park maps an input describes; with a seed, everything built in another order. */
function build(input: SessionInput, seed?: number) {
  const next = seed === undefined ? undefined : random(seed);
  const order = <T>(list: readonly T[]) => (next ? shuffled(list, next) : [...list]);
  const keys = <T>(value: T) => (next ? shuffleKeys(value, next) : value);
  const session = new SessionManager();
  for (const [key, value] of order(Object.entries(input.state))) session.stateSet(key, keys(value));
  session.plan().set(input.todos);
  session.plan().setDocument(input.document);
  for (const i of order(input.interrupts)) {
    session.raiseInterrupt(i.id, i.kind, keys(i.payload), i.requesters);
    if (i.result !== undefined) session.returnInterrupt(i.id, keys(i.result));
  }
  const pendingToolCalls: Record<string, PendingToolCall> = Object.fromEntries(
    order(input.pendingToolCalls).map((c) => [c.id, { ...c, input: keys(c.input) }]),
  );
  const interruptToRequester = Object.fromEntries(
    order(Object.entries(input.interruptToRequester)),
  );
  return { session, window: input.window, pendingToolCalls, interruptToRequester };
}

function capture(input: SessionInput, seed?: number): SessionCheckpoint {
  const { session, window, pendingToolCalls, interruptToRequester } = build(input, seed);
  return new Checkpointer().capture(window, session, pendingToolCalls, interruptToRequester);
}

/** True when every object in `value`, at every depth, lists its keys in canonical order. */
function keysCanonical(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(keysCanonical);
  if (typeof value !== 'object' || value === null) return true;
  const keys = Object.keys(value);
  // What a sorted object looks like in JavaScript: integer-like keys always lead, numerically.
  const canonical = Object.keys(Object.fromEntries([...keys].sort().map((k) => [k, 0])));
  return (
    keys.join('\u0000') === canonical.join('\u0000') && Object.values(value).every(keysCanonical)
  );
}

// ---- the package ------------------------------------------------------------------------

describe('README: the package', () => {
  it('depends only on @x/wire (and zod)', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['@x/wire', 'zod']);
  });

  it('each entry point exports what the table lists', async () => {
    const main = await import('./index.js');
    for (const name of [
      'SessionManager',
      'PlanStore',
      'Runtime',
      'createRuntime',
      'createEventChannel',
      'Checkpointer',
      'parseCheckpoint',
      'MemoryCheckpointStore',
      'SessionError',
    ]) {
      expect(main).toHaveProperty(name);
    }
    expect(await import('./file/index.js')).toHaveProperty('FileCheckpointStore');
    expect(await import('./testing/index.js')).toHaveProperty('describeCheckpointStore');
  });

  it('the README example runs as written: ask, checkpoint, restart, answer exactly once', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'x-session-readme-'));
    try {
      const store = new FileCheckpointStore({ directory: join(directory, 'sessions') });
      const checkpointer = new Checkpointer();
      const threadId = 'thread-42';
      const session = new SessionManager();
      const { sink, events } = createEventChannel({ capacity: 64 });
      const seen: string[] = [];
      const consumed = (async () => {
        for await (const event of events) seen.push(event.type);
      })();
      const runtime = createRuntime({ session, events: sink, store });
      const window: Message[] = [
        { role: 'user', content: [{ type: 'text', text: 'Deploy to production.' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'approve', input: { action: 'deploy' } },
          ],
        },
      ];
      const tool = runtime.withToolCall('toolu_1');
      tool.emitUpdate('checking the release');
      session.plan().set([{ id: '1', content: 'Deploy', status: 'in_progress' }]);
      tool.emitPlanUpdate(session.plan().get() ?? []);
      if (tool.takeResolvedInterrupt('toolu_1') === undefined) {
        tool.raiseInterrupt('approval', { action: 'deploy' });
      }
      sink.emit({ type: 'turn-ended', reason: 'suspended' });
      sink.close();
      await consumed;
      expect(seen).toEqual(['tool-progress', 'plan-updated', 'interrupt-raised', 'turn-ended']);
      const pendingToolCalls = {
        toolu_1: { id: 'toolu_1', name: 'approve', input: { action: 'deploy' } },
      };
      await store.put(threadId, checkpointer.capture(window, session, pendingToolCalls));

      const stored = await store.get(threadId);
      if (stored === undefined) throw new Error('no such thread');
      const restored = new SessionManager();
      const applied = checkpointer.apply(stored.checkpoint, restored);
      restored.returnInterrupt('toolu_1', { approved: true });
      const again = createRuntime({ session: restored, events: createEventChannel().sink });
      const tool2 = again.withToolCall('toolu_1');
      expect(tool2.takeResolvedInterrupt('toolu_1')?.result).toEqual({ approved: true });
      expect(tool2.takeResolvedInterrupt('toolu_1')).toBeUndefined();
      await store.put(
        threadId,
        checkpointer.capture(applied.window, restored, {}, applied.interruptToRequester),
        { expectedRevision: stored.revision },
      );
      // A host still holding the old revision gets conflict and overwrites nothing.
      const stale = await store
        .put(threadId, stored.checkpoint, { expectedRevision: stored.revision })
        .catch((error: unknown) => error);
      expect(SessionError.hasCode(stale, 'conflict')).toBe(true);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

// ---- SessionManager -----------------------------------------------------------------------

describe('README: SessionManager', () => {
  it('state holds JSON values only (invalid otherwise, also for the key __proto__), copied in and out', () => {
    const notJson = fc.constantFrom<unknown>(
      undefined,
      Number.NaN,
      new Date(0),
      () => 1,
      Object.assign(new Array<number>(3), { 0: 1, 2: 3 }),
      JSON.parse(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`),
    );
    fc.assert(
      fc.property(userKey, json, notJson, (key, value, bad) => {
        const session = new SessionManager();
        const given = structuredClone(value);
        session.stateSet(key, given);
        if (typeof given === 'object' && given !== null) (given as { x?: number }).x = 1;
        const got = session.stateGet(key);
        expect(got).toEqual(value);
        if (typeof got === 'object' && got !== null) (got as { y?: number }).y = 2;
        expect(session.stateGet(key)).toEqual(value);
        expectSessionError(
          outcome(() => session.stateSet(key, bad as JsonValue)),
          'invalid',
        );
        expect(session.stateGet(key)).toEqual(value);
        expectSessionError(
          outcome(() => session.stateSet('__proto__', value)),
          'invalid',
        );
        session.stateDelete(key);
        expect(session.stateGet(key)).toBeUndefined();
      }),
      { numRuns: 50 },
    );
  });

  it('plan() is never null and always the same module; hasActivePlan is true only for a non-empty todo list', () => {
    fc.assert(
      fc.property(fc.option(fc.array(todo, { maxLength: 3 }), { nil: null }), (todos) => {
        const session = new SessionManager();
        const plan = session.plan();
        expect(plan).toBeInstanceOf(PlanStore);
        plan.set(todos);
        expect(session.plan()).toBe(plan);
        expect(session.hasActivePlan()).toBe(todos !== null && todos.length > 0);
      }),
      { numRuns: 50 },
    );
  });

  it('interrupts follow their model: pending until returned (once: then interrupt_not_found), taken once, all dropped by clearInterrupts', () => {
    const op = fc.oneof(
      fc.record({ op: fc.constant('raise' as const), id: fc.constantFrom('a', 'b', 'c') }),
      fc.record({ op: fc.constant('return' as const), id: fc.constantFrom('a', 'b', 'c') }),
      fc.record({ op: fc.constant('take' as const), id: fc.constantFrom('a', 'b', 'c') }),
      fc.record({ op: fc.constant('clear' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 20 }), (ops) => {
        const session = new SessionManager();
        const pending = new Set<string>();
        const resolved = new Set<string>();
        ops.forEach((o, n) => {
          if (o.op === 'raise') {
            const error = outcome(() => session.raiseInterrupt(o.id, 'ask', { n }));
            if (pending.has(o.id)) expectSessionError(error, 'interrupt_pending');
            else {
              // An answer still waiting to be taken stays until it is taken.
              expect(error).toBeUndefined();
              pending.add(o.id);
            }
          } else if (o.op === 'return') {
            const error = outcome(() => session.returnInterrupt(o.id, n));
            if (!pending.has(o.id)) expectSessionError(error, 'interrupt_not_found');
            else {
              expect(error).toBeUndefined();
              pending.delete(o.id);
              resolved.add(o.id);
            }
          } else if (o.op === 'take') {
            const taken = session.takeResolvedInterrupt(o.id);
            expect(taken?.status).toBe(resolved.has(o.id) ? 'resolved' : undefined);
            resolved.delete(o.id);
          } else {
            session.clearInterrupts();
            pending.clear();
            resolved.clear();
          }
          expect(session.hasPendingInterrupt()).toBe(pending.size > 0);
          for (const i of ['a', 'b', 'c']) {
            expect(session.pendingInterrupt(i)?.id).toBe(pending.has(i) ? i : undefined);
          }
        });
      }),
      { numRuns: 80 },
    );
  });

  it('snapshotDurable is a deep copy both ways, and reserved keys in user state are never exported as user keys', () => {
    fc.assert(
      fc.property(
        sessionInput,
        json,
        fc.constantFrom('_plan_todos', '_plan_document', '_search_namespace'),
        (input, later, reserved) => {
          const { session } = build(input);
          session.stateSet(reserved, 'a tool wrote this');
          const snapshot = session.snapshotDurable();
          const text = JSON.stringify(snapshot);
          for (const key of Object.keys(input.state)) session.stateSet(key, later);
          session.clearInterrupts();
          expect(JSON.stringify(snapshot)).toBe(text);
          const before = JSON.stringify(session.snapshotDurable());
          for (const key of Object.keys(snapshot.runtimeState))
            snapshot.runtimeState[key] = 'changed';
          for (const i of Object.values(snapshot.pending)) i.payload = 'changed';
          expect(JSON.stringify(session.snapshotDurable())).toBe(before);
          expect(JSON.parse(text).runtimeState[reserved]).not.toBe('a tool wrote this');
        },
      ),
      { numRuns: 50 },
    );
  });

  it('loadUserAndPlanState and loadInterruptsJSON replace what the session held; reserved keys never become user keys; bad input changes nothing', () => {
    const badState = fc.constantFrom<unknown>(
      { _plan_todos: 'not a list' },
      { _plan_document: 5 },
      { key: Number.NaN },
      5,
    );
    fc.assert(
      fc.property(sessionInput, sessionInput, badState, (first, second, bad) => {
        const { session } = build(first);
        const replacement = build(second).session.snapshotDurable();
        const withLegacy = { ...replacement.runtimeState, _search_namespace: 'legacy' };
        session.loadUserAndPlanState(withLegacy);
        session.loadInterruptsJSON(
          JSON.stringify(replacement.pending),
          JSON.stringify(replacement.resolved),
        );
        expect(session.snapshotDurable()).toEqual(replacement);
        expect(session.stateGet('_search_namespace')).toBeUndefined();
        expect(session.stateGet('_plan_todos')).toBeUndefined();
        const before = JSON.stringify(session.snapshotDurable());
        expectSessionError(
          outcome(() => session.loadUserAndPlanState(bad as never)),
          'invalid',
        );
        expectSessionError(
          outcome(() =>
            session.loadInterruptsJSON(
              '{"a":{"id":"b","kind":"k","payload":1,"status":"pending"}}',
              null,
            ),
          ),
          'invalid',
        );
        expectSessionError(
          outcome(() => session.loadInterruptsJSON('{', null)),
          'invalid',
        );
        expect(JSON.stringify(session.snapshotDurable())).toBe(before);
      }),
      { numRuns: 50 },
    );
  });
});

// ---- PlanStore ----------------------------------------------------------------------------

describe('README: PlanStore', () => {
  it('get is null until set and [] for an explicit empty plan, always a copy; set(null) clears; hasActive means a list is present', () => {
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.array(todo, { maxLength: 3 }), { nil: null }), { maxLength: 4 }),
        (sets) => {
          const plan = new PlanStore();
          expect(plan.get()).toBeNull();
          expect(plan.hasActive()).toBe(false);
          for (const todos of sets) {
            plan.set(todos);
            expect(plan.get()).toEqual(todos);
            expect(plan.hasActive()).toBe(todos !== null);
            const copy = plan.get();
            copy?.push({ id: 'extra', content: '', status: 'pending' });
            if (copy?.[0]) copy[0].content = 'changed';
            expect(plan.get()).toEqual(todos);
          }
        },
      ),
      { numRuns: 50 },
    );
  });

  it('the document is marked updated only when an existing, different draft is replaced; consume returns and clears the flag; loading clears it and it is never checkpointed', () => {
    const op = fc.oneof(
      fc.record({ op: fc.constant('set' as const), text: fc.constantFrom('', 'a', 'b') }),
      fc.record({ op: fc.constant('consume' as const) }),
      fc.record({ op: fc.constant('load' as const), text: fc.constantFrom('', 'a', 'c') }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 15 }), (ops) => {
        const plan = new PlanStore();
        let document = '';
        let updated = false;
        for (const o of ops) {
          if (o.op === 'set') {
            if (document !== '' && document !== o.text) updated = true;
            document = o.text;
            plan.setDocument(o.text);
          } else if (o.op === 'consume') {
            expect(plan.consumeDocumentUpdated()).toBe(updated);
            updated = false;
          } else {
            plan.loadFromState(o.text === '' ? {} : { _plan_document: o.text });
            document = o.text;
            updated = false;
          }
          expect(plan.document()).toBe(document);
          const state: Record<string, JsonValue> = {};
          plan.exportInto(state);
          expect(
            Object.keys(state).every((k) => k === '_plan_todos' || k === '_plan_document'),
          ).toBe(true);
        }
      }),
      { numRuns: 80 },
    );
  });

  it('exportInto / loadFromState round-trip, also through JSON, keeping null and [] distinct', () => {
    fc.assert(
      fc.property(
        fc.option(fc.array(todo, { maxLength: 3 }), { nil: null }),
        fc.string(),
        fc.boolean(),
        (todos, document, viaJson) => {
          const plan = new PlanStore();
          plan.set(todos);
          plan.setDocument(document);
          const state: Record<string, JsonValue> = { _plan_todos: 'stale', user: 1 };
          plan.exportInto(state);
          const back = new PlanStore();
          back.loadFromState(viaJson ? JSON.parse(JSON.stringify(state)) : state);
          expect(back.get()).toEqual(todos);
          expect(back.document()).toBe(document);
          expect(state.user).toBe(1);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('the reserved keys are exactly _plan_todos, _plan_document and the legacy _search_namespace; stripPlanKeys removes exactly those', () => {
    const reserved = ['_plan_todos', '_plan_document', '_search_namespace'];
    fc.assert(
      fc.property(
        fc.dictionary(fc.oneof(fc.string(), fc.constantFrom(...reserved)), json, { maxKeys: 6 }),
        (state) => {
          for (const key of Object.keys(state))
            expect(isReservedRuntimeStateKey(key)).toBe(reserved.includes(key));
          const copy = { ...state };
          stripPlanKeys(copy);
          expect(copy).toEqual(
            Object.fromEntries(Object.entries(state).filter(([k]) => !reserved.includes(k))),
          );
        },
      ),
      { numRuns: 50 },
    );
  });
});

// ---- Runtime ------------------------------------------------------------------------------

describe('README: interrupts and the Runtime', () => {
  function recorded() {
    const events: StreamEvent[] = [];
    return {
      events,
      sink: { emit: (e: StreamEvent) => void events.push(e), close() {}, closed: false },
    };
  }

  it('withToolCall sets currentToolCallId and shares sink, session and store; raise and return emit their events; outside a call no_current_tool_call; a second raise interrupt_pending', () => {
    fc.assert(
      fc.property(id, id, json, json, (call, kind, payload, result) => {
        const session = new SessionManager();
        const { events, sink } = recorded();
        const store = new MemoryCheckpointStore();
        const runtime = createRuntime({ session, events: sink, store });
        expect(runtime.currentToolCallId).toBeUndefined();
        expectSessionError(
          outcome(() => runtime.raiseInterrupt(kind, payload)),
          'no_current_tool_call',
        );
        expectSessionError(
          outcome(() => runtime.emitUpdate('x')),
          'no_current_tool_call',
        );
        const tool = runtime.withToolCall(call);
        expect(tool.currentToolCallId).toBe(call);
        expect(tool.store).toBe(store);
        tool.emitUpdate('working');
        const raised = tool.raiseInterrupt(kind, payload);
        expect(raised).toMatchObject({ id: call, kind, status: 'pending' });
        expect(runtime.hasPendingInterrupt()).toBe(true);
        expect(runtime.pendingInterrupt(call)?.payload).toEqual(payload);
        expectSessionError(
          outcome(() => tool.raiseInterrupt(kind, payload)),
          'interrupt_pending',
        );
        tool.returnInterrupt(call, result);
        expect(tool.takeResolvedInterrupt(call)?.result).toEqual(result);
        expect(tool.takeResolvedInterrupt(call)).toBeUndefined();
        tool.stateSet('k', payload);
        expect(session.stateGet('k')).toEqual(payload);
        expect(events.map((e) => e.type)).toEqual([
          'tool-progress',
          'interrupt-raised',
          'interrupt-resolved',
        ]);
        expect(events[1]).toEqual({ type: 'interrupt-raised', toolCallId: call, kind, payload });
        expect(events[2]).toEqual({ type: 'interrupt-resolved', toolCallId: call, result });
      }),
      { numRuns: 50 },
    );
  });

  it("adoptInterrupt gives the parent the child's kind and payload with requesters = [child.id, ...child.requesters], down any chain", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(id, { minLength: 2, maxLength: 5 }),
        id,
        json,
        (calls, kind, payload) => {
          // calls[0] is the deepest worker's tool call; each level adopts the one below.
          const sessions = calls.map(() => new SessionManager());
          const runtimes = sessions.map((session) =>
            createRuntime({ session, events: recorded().sink }),
          );
          let child: Interrupt = (runtimes[0] as ReturnType<typeof createRuntime>)
            .withToolCall(calls[0] as string)
            .raiseInterrupt(kind, payload);
          for (let level = 1; level < calls.length; level++) {
            const adopted = (runtimes[level] as ReturnType<typeof createRuntime>)
              .withToolCall(calls[level] as string)
              .adoptInterrupt(child);
            expect(adopted).toMatchObject({ id: calls[level], kind, payload, status: 'pending' });
            expect(adopted.requesters).toEqual([child.id, ...(child.requesters ?? [])]);
            child = adopted;
          }
          expect(child.requesters).toEqual(calls.slice(0, -1).reverse());
        },
      ),
      { numRuns: 50 },
    );
  });

  it('createRuntime refuses a missing or malformed session or event sink at construction, with invalid', () => {
    const session = fc.constantFrom<unknown>(undefined, null, {}, 1, new SessionManager());
    const events = fc.constantFrom<unknown>(
      undefined,
      null,
      {},
      { emit: 1 },
      createEventChannel().sink,
    );
    fc.assert(
      fc.property(session, events, (s, e) => {
        const ok =
          s instanceof SessionManager &&
          e !== null &&
          typeof (e as { emit?: unknown })?.emit === 'function';
        const error = outcome(() => createRuntime({ session: s, events: e } as never));
        if (ok) expect(error).toBeUndefined();
        else expectSessionError(error, 'invalid');
      }),
      { numRuns: 50 },
    );
  });
});

// ---- event channel --------------------------------------------------------------------------

const streamEvent: fc.Arbitrary<StreamEvent> = fc.oneof(
  fc.record({
    type: fc.constant('tool-progress' as const),
    toolCallId: fc.constantFrom('a', 'b'),
    message: fc.string(),
  }),
  fc.record({ type: fc.constant('text-delta' as const), text: fc.string({ maxLength: 3 }) }),
  fc.record({
    type: fc.constant('plan-updated' as const),
    todos: fc.array(todo, { maxLength: 2 }),
  }),
  fc.record({
    type: fc.constant('interrupt-raised' as const),
    toolCallId: id,
    kind: id,
    payload: json,
  }),
  fc.record({ type: fc.constant('interrupt-resolved' as const), toolCallId: id, result: json }),
  fc.record({
    type: fc.constant('turn-ended' as const),
    reason: fc.constantFrom('completed', 'suspended', 'cancelled', 'failed'),
  }),
);

describe('README: event channel', () => {
  it('sink.emit never throws, before or after close, with or without a consumer (every StreamEvent)', () => {
    fc.assert(
      fc.property(
        fc.array(streamEvent, { maxLength: 30 }),
        fc.integer({ min: 1, max: 4 }),
        fc.nat({ max: 30 }),
        (input, capacity, closeAt) => {
          const { sink, stats } = createEventChannel({ capacity });
          input.forEach((event, n) => {
            if (n === closeAt) sink.close();
            sink.emit(event);
          });
          expect(stats.emitted + stats.discarded).toBe(input.length);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('while the consumer keeps up, every event is delivered as emitted', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(streamEvent, { maxLength: 20 }), async (input) => {
        const { sink, events, stats } = createEventChannel({ capacity: 1 });
        const iterator = events[Symbol.asyncIterator]();
        for (const event of input) {
          const next = iterator.next();
          sink.emit(event);
          expect((await next).value).toEqual(event);
        }
        expect(stats).toMatchObject({
          emitted: input.length,
          delivered: input.length,
          coalesced: 0,
          dropped: 0,
        });
      }),
      { numRuns: 50 },
    );
  });
  // The slow-consumer policy is a property of its own in event-channel.test.ts.
});

// ---- checkpoints --------------------------------------------------------------------------

describe('README: checkpoints', () => {
  it('capture writes version 1; capture → JSON → apply restores the session, the window and the park maps', () => {
    fc.assert(
      fc.property(sessionInput, (input) => {
        const built = build(input);
        const checkpoint = capture(input);
        expect(checkpoint.version).toBe(1);
        const restored = new SessionManager();
        const applied = new Checkpointer().apply(
          parseCheckpoint(serializeCheckpoint(checkpoint)),
          restored,
        );
        expect(applied.window).toEqual(input.window);
        expect(applied.pendingToolCalls).toEqual(built.pendingToolCalls);
        expect(applied.interruptToRequester).toEqual(input.interruptToRequester);
        expect(restored.snapshotDurable()).toEqual(built.session.snapshotDurable());
      }),
      { numRuns: 50 },
    );
  });

  it('equal sessions give byte-equal JSON, however their values and maps were built (key and insertion order)', () => {
    fc.assert(
      fc.property(sessionInput, fc.integer(), fc.integer(), (input, a, b) => {
        expect(serializeCheckpoint(capture(input, a))).toBe(serializeCheckpoint(capture(input, b)));
        expect(serializeCheckpoint(capture(input, a))).toBe(serializeCheckpoint(capture(input)));
      }),
      { numRuns: 80 },
    );
  });

  it('every map, and every object inside state values, payloads, results and pending inputs, is sorted at every depth; fixed-shape records keep schema order; the window is kept as given', () => {
    fc.assert(
      fc.property(sessionInput, fc.integer(), (input, seed) => {
        const checkpoint = capture(input, seed);
        const { _plan_todos: todos, ...user } = checkpoint.runtimeState;
        expect(keysCanonical(user)).toBe(true);
        expect(
          keysCanonical(
            Object.fromEntries(Object.keys(checkpoint.runtimeState).map((k) => [k, 0])),
          ),
        ).toBe(true);
        for (const t of (todos as Todo[] | undefined) ?? [])
          expect(Object.keys(t)).toEqual(['id', 'content', 'status']);
        for (const map of [
          checkpoint.interrupts.pending,
          checkpoint.interrupts.resolved,
          checkpoint.pendingToolCalls,
          checkpoint.interruptToRequester,
        ]) {
          expect(keysCanonical(Object.fromEntries(Object.keys(map).map((k) => [k, 0])))).toBe(true);
        }
        for (const i of [
          ...Object.values(checkpoint.interrupts.pending),
          ...Object.values(checkpoint.interrupts.resolved),
        ]) {
          expect(Object.keys(i)).toEqual([
            'id',
            'kind',
            'payload',
            'status',
            ...(i.result === undefined ? [] : ['result']),
            ...(i.requesters ? ['requesters'] : []),
          ]);
          expect(keysCanonical(i.payload) && keysCanonical(i.result ?? null)).toBe(true);
        }
        for (const c of Object.values(checkpoint.pendingToolCalls)) {
          expect(Object.keys(c)).toEqual(['id', 'name', 'input']);
          expect(keysCanonical(c.input)).toBe(true);
        }
        const shuffledWindow = shuffleKeys(input.window, random(seed));
        const { session } = build(input);
        const kept = new Checkpointer().capture(shuffledWindow, session).window;
        expect(JSON.stringify(kept)).toBe(JSON.stringify(shuffledWindow));
      }),
      { numRuns: 60 },
    );
  });

  it('reading does not depend on key order: a checkpoint shuffled at every depth (window aside) applies to the same session and re-captures to the same bytes', () => {
    fc.assert(
      fc.property(sessionInput, fc.integer(), (input, seed) => {
        const text = serializeCheckpoint(capture(input));
        const { window, ...rest } = JSON.parse(text) as SessionCheckpoint;
        const shuffledText = JSON.stringify({ ...shuffleKeys(rest, random(seed)), window });
        const restored = new SessionManager();
        const applied = new Checkpointer().apply(parseCheckpoint(shuffledText), restored);
        const again = new Checkpointer().capture(
          applied.window,
          restored,
          applied.pendingToolCalls,
          applied.interruptToRequester,
        );
        expect(serializeCheckpoint(again)).toBe(text);
      }),
      { numRuns: 60 },
    );
  });

  it('capture and apply are pure: capture changes none of its inputs, and what apply returns is a copy', () => {
    fc.assert(
      fc.property(sessionInput, (input) => {
        const { session, window, pendingToolCalls, interruptToRequester } = build(input);
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
        expect(
          JSON.stringify([
            session.snapshotDurable(),
            window,
            pendingToolCalls,
            interruptToRequester,
          ]),
        ).toBe(before);
        const text = JSON.stringify(checkpoint);
        const applied = new Checkpointer().apply(checkpoint, new SessionManager());
        applied.window.push({ role: 'user', content: [] });
        for (const key of Object.keys(applied.interruptToRequester))
          applied.interruptToRequester[key] = 'x';
        for (const call of Object.values(applied.pendingToolCalls)) call.input = 'x';
        expect(JSON.stringify(checkpoint)).toBe(text);
      }),
      { numRuns: 50 },
    );
  });

  const corruption = fc.constantFrom<
    [string, (c: Record<string, unknown>) => void, SessionErrorCode]
  >(
    [
      'a newer version',
      (c) => {
        c.version = 2;
      },
      'unsupported_version',
    ],
    [
      'a message of role system',
      (c) => {
        c.window = [{ role: 'system', content: [] }];
      },
      'invalid',
    ],
    [
      'a malformed plan',
      (c) => {
        (c.runtimeState as Record<string, unknown>)._plan_todos = 'no';
      },
      'invalid',
    ],
    [
      'a non-JSON state value',
      (c) => {
        (c.runtimeState as Record<string, unknown>).x = Number.NaN;
      },
      'invalid',
    ],
    [
      'a resolved interrupt among pending ones',
      (c) => {
        (c.interrupts as Record<string, unknown>).pending = {
          a: { id: 'a', kind: 'k', payload: 1, status: 'resolved' },
        };
      },
      'invalid',
    ],
    [
      'a pending call under another key',
      (c) => {
        c.pendingToolCalls = { a: { id: 'b', name: 'n', input: 1 } };
      },
      'invalid',
    ],
    [
      'an empty requester',
      (c) => {
        c.interruptToRequester = { a: '' };
      },
      'invalid',
    ],
  );

  it('apply of an invalid or newer checkpoint throws (invalid / unsupported_version) and leaves the session as it was', () => {
    fc.assert(
      fc.property(sessionInput, sessionInput, corruption, (held, incoming, [, corrupt, code]) => {
        const { session } = build(held);
        const before = JSON.stringify(session.snapshotDurable());
        const checkpoint = JSON.parse(serializeCheckpoint(capture(incoming)));
        corrupt(checkpoint);
        expectSessionError(
          outcome(() => new Checkpointer().apply(checkpoint, session)),
          code,
        );
        expect(JSON.stringify(session.snapshotDurable())).toBe(before);
      }),
      { numRuns: 50 },
    );
  });

  it('parseCheckpoint checks the version first: a newer version is unsupported_version whatever else the checkpoint holds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 1_000_000 }),
        fc.dictionary(fc.string(), fc.anything(), { maxKeys: 4 }),
        fc.boolean(),
        (version, rest, asText) => {
          const input = { ...rest, version };
          expectSessionError(
            outcome(() => parseCheckpoint(asText ? JSON.stringify(input) : input)),
            'unsupported_version',
          );
        },
      ),
      { numRuns: 50 },
    );
  });

  it('capture refuses a pending tool call whose input is not a JSON value', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<unknown>(Number.NaN, undefined, new Date(0), () => 1),
        (input) => {
          const calls = { a: { id: 'a', name: 'f', input: input as JsonValue } };
          expectSessionError(
            outcome(() => new Checkpointer().capture([], new SessionManager(), calls)),
            'invalid',
          );
        },
      ),
      { numRuns: 10 },
    );
  });
});

// ---- CheckpointStore ------------------------------------------------------------------------

describe('README: CheckpointStore', () => {
  const folders: string[] = [];
  afterAll(async () => {
    await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
  });
  const stores: Record<string, () => Promise<CheckpointStore>> = {
    MemoryCheckpointStore: async () => new MemoryCheckpointStore(),
    FileCheckpointStore: async () => {
      const folder = await mkdtemp(join(tmpdir(), 'x-session-props-'));
      folders.push(folder);
      return new FileCheckpointStore({ directory: join(folder, 'sessions') });
    },
  };
  const checkpoint: SessionCheckpoint = {
    version: 1,
    window: [],
    runtimeState: { n: 1 },
    interrupts: { pending: {}, resolved: {} },
    pendingToolCalls: {},
    interruptToRequester: {},
  };

  it.each(Object.entries(stores))(
    '%s: writes follow the model: create with null, update with the revision read; anything else is conflict and writes nothing; revisions never repeat, even across delete',
    async (_name, create) => {
      const op = fc.oneof(
        fc.record({
          op: fc.constant('put' as const),
          expected: fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 6 })),
          n: fc.nat({ max: 9 }),
        }),
        fc.record({
          op: fc.constant('delete' as const),
          expected: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
        }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 12 }), async (ops) => {
          const store = await create();
          const thread = `t-${Math.random().toString(36).slice(2)}`;
          let last = 0; // the last revision ever written (a delete is a write too)
          let live: number | null = null;
          let value: number | undefined;
          const seen = new Set<number>();
          for (const o of ops) {
            if (o.op === 'put') {
              const result = await store
                .put(
                  thread,
                  { ...checkpoint, runtimeState: { n: o.n } },
                  { expectedRevision: o.expected },
                )
                .catch((e: unknown) => e);
              if (o.expected === live) {
                expect(result).toBe(last + 1);
                expect(seen.has(result as number)).toBe(false);
                last = live = result as number;
                seen.add(last);
                value = o.n;
              } else expectSessionError(result, 'conflict');
            } else {
              const result = await store
                .delete(thread, o.expected === undefined ? {} : { expectedRevision: o.expected })
                .catch((e: unknown) => e);
              if (o.expected !== undefined && o.expected !== live)
                expectSessionError(result, 'conflict');
              else {
                expect(result).toBe(live !== null);
                if (live !== null) {
                  last += 1;
                  seen.add(last);
                }
                live = null;
              }
            }
            const got = await store.get(thread);
            expect(got?.revision ?? null).toBe(live);
            if (live !== null) expect(got?.checkpoint.runtimeState).toEqual({ n: value });
            expect((await store.list()).find((s) => s.threadId === thread)?.revision ?? null).toBe(
              live,
            );
          }
        }),
        { numRuns: _name === 'FileCheckpointStore' ? 8 : 50 },
      );
    },
  );

  it('thread ids: exactly 1–200 of A-Z a-z 0-9 . _ - not starting with ".", else unsafe_id before any I/O', async () => {
    const store = new FileCheckpointStore({ directory: join(tmpdir(), 'x-session-never-created') });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 210 }),
          fc.stringMatching(/^[A-Za-z0-9._-]{0,201}$/),
          fc.anything(),
        ),
        async (threadId) => {
          const safe =
            typeof threadId === 'string' && /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/.test(threadId);
          expect(isSafeThreadId(threadId)).toBe(safe);
          if (!safe) {
            for (const call of [
              () => store.get(threadId as string),
              () => store.put(threadId as string, checkpoint),
              () => store.delete(threadId as string),
            ]) {
              expectSessionError(await call().catch((e: unknown) => e), 'unsafe_id');
            }
          }
        },
      ),
      { numRuns: 80 },
    );
  });
});

// ---- errors -------------------------------------------------------------------------------

describe('README: errors', () => {
  const thunk = (label: string, make: () => unknown) =>
    Object.assign(make, { [fc.toStringMethod]: () => label });
  const hostile = fc.constantFrom(
    thunk('a revoked proxy', () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    }),
    thunk('an object whose getter throws', () =>
      Object.defineProperty({ version: 1 }, 'window', {
        enumerable: true,
        get() {
          throw new Error('boom');
        },
      }),
    ),
    thunk(
      'a proxy whose every trap throws',
      () =>
        new Proxy(
          {},
          {
            get: () => {
              throw new TypeError('trap');
            },
            ownKeys: () => {
              throw new TypeError('trap');
            },
          },
        ),
    ),
  );
  const junk = fc.oneof(
    fc.anything({ maxDepth: 2 }).map((value) => thunk(fc.stringify(value), () => value)),
    hostile,
  );
  const calls: Record<string, (x: unknown) => unknown> = {
    parseCheckpoint: (x) => parseCheckpoint(x),
    'Checkpointer.apply': (x) => new Checkpointer().apply(x as never, new SessionManager()),
    'Checkpointer.capture (pending calls)': (x) =>
      new Checkpointer().capture([], new SessionManager(), x as never),
    'Checkpointer.capture (requesters)': (x) =>
      new Checkpointer().capture([], new SessionManager(), {}, x as never),
    stateSet: (x) => new SessionManager().stateSet('k', x as never),
    'stateSet (key)': (x) => new SessionManager().stateSet(x as never, 1),
    loadUserAndPlanState: (x) => new SessionManager().loadUserAndPlanState(x as never),
    loadInterrupts: (x) => new SessionManager().loadInterrupts(x as never, {}),
    loadInterruptsJSON: (x) => new SessionManager().loadInterruptsJSON(x as never, null),
    raiseInterrupt: (x) => new SessionManager().raiseInterrupt('a', 'k', x as never),
    'raiseInterrupt (id)': (x) => new SessionManager().raiseInterrupt(x as never, 'k', 1),
    returnInterrupt: (x) => new SessionManager().returnInterrupt(x as never, 1),
    'PlanStore.set': (x) => new PlanStore().set(x as never),
    'PlanStore.loadFromState': (x) => new PlanStore().loadFromState(x as never),
    'PlanStore.setDocument': (x) => new PlanStore().setDocument(x as never),
    createRuntime: (x) => createRuntime(x as never),
    createEventChannel: (x) => createEventChannel(x as never),
    adoptInterrupt: (x) =>
      createRuntime({ session: new SessionManager(), events: createEventChannel().sink })
        .withToolCall('a')
        .adoptInterrupt(x as never),
  };
  const store = new MemoryCheckpointStore();
  const storeCalls: Record<string, (x: unknown) => Promise<unknown>> = {
    get: (x) => store.get(x as never),
    put: (x) => store.put('t', x as never),
    'put (thread id)': (x) => store.put(x as never, {} as never),
    'put (options)': (x) => store.put('t', {} as never, x as never),
    'delete (options)': (x) => store.delete('t', x as never),
  };

  it('SessionError.is and hasCode work across package copies (a marker, not class identity)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CODES), fc.anything(), (code, other) => {
        const foreign = { [Symbol.for('@x/session.SessionError')]: true, code };
        expect(SessionError.is(foreign)).toBe(true);
        expect(SessionError.hasCode(foreign, code)).toBe(true);
        if (
          !(
            typeof other === 'object' &&
            other !== null &&
            Symbol.for('@x/session.SessionError') in other
          )
        ) {
          expect(SessionError.is(other)).toBe(false);
        }
      }),
      { numRuns: 50 },
    );
  });

  it('every failure is a SessionError with a code of the closed union and a [@x/session] message, for any input; is and hasCode recognise it', async () => {
    await fc.assert(
      fc.asyncProperty(junk, async (make) => {
        for (const [name, call] of Object.entries(calls)) {
          const error = outcome(() => call(make()));
          if (error === undefined) continue;
          if (!SessionError.is(error)) throw new Error(`${name} threw ${String(error)}`);
          expectSessionError(error);
          expect(SessionError.hasCode(error, error.code)).toBe(true);
          expect(typeof error.details).toBe('object');
        }
        for (const [name, call] of Object.entries(storeCalls)) {
          const error = await call(make()).then(
            () => undefined,
            (e: unknown) => e,
          );
          if (error !== undefined && !SessionError.is(error))
            throw new Error(`${name} threw ${String(error)}`);
        }
      }),
      { numRuns: 100 },
    );
  });
});
