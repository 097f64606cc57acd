import { describe, expect, it } from 'vitest';
import { SessionError, SessionManager } from './index.js';

describe('SessionManager state', () => {
  it('stateSet / stateGet / stateDelete', () => {
    const session = new SessionManager();
    expect(session.stateGet('k')).toBeUndefined();
    session.stateSet('k', { a: [1, 2] });
    expect(session.stateGet('k')).toEqual({ a: [1, 2] });
    session.stateSet('nothing', null);
    expect(session.stateGet('nothing')).toBeNull();
    session.stateDelete('k');
    expect(session.stateGet('k')).toBeUndefined();
    session.stateDelete('k');
  });

  it('values are copied on the way in and out', () => {
    const session = new SessionManager();
    const value = { list: [1] };
    session.stateSet('k', value);
    value.list.push(2);
    const got = session.stateGet('k') as { list: number[] };
    got.list.push(3);
    expect(session.stateGet('k')).toEqual({ list: [1] });
  });

  it('refuses a value that is not plain JSON', () => {
    const session = new SessionManager();
    expect(() => session.stateSet('k', new Date() as never)).toThrow(
      expect.objectContaining({ code: 'invalid' }),
    );
    expect(() => session.stateSet('k', Number.NaN)).toThrow(SessionError);
    expect(() => session.stateSet('__proto__', 1)).toThrow(
      expect.objectContaining({ code: 'invalid' }),
    );
    expect(session.stateGet('k')).toBeUndefined();
  });

  it('plan() is never null and is the same module every time', () => {
    const session = new SessionManager();
    expect(session.plan()).toBeDefined();
    expect(session.plan()).toBe(session.plan());
  });

  it('hasActivePlan is true only for a non-empty todo list', () => {
    const session = new SessionManager();
    expect(session.hasActivePlan()).toBe(false);
    session.plan().set([]);
    expect(session.hasActivePlan()).toBe(false);
    session.plan().set([{ id: '1', content: 'x', status: 'pending' }]);
    expect(session.hasActivePlan()).toBe(true);
  });
});

describe('SessionManager snapshotDurable', () => {
  it('exports user state and the plan under its reserved keys', () => {
    const session = new SessionManager();
    session.stateSet('b', 2);
    session.stateSet('a', 1);
    session.plan().set([{ id: '1', content: 'x', status: 'pending' }]);
    session.plan().setDocument('doc');
    const { runtimeState } = session.snapshotDurable();
    expect(runtimeState).toEqual({
      a: 1,
      b: 2,
      _plan_todos: [{ id: '1', content: 'x', status: 'pending' }],
      _plan_document: 'doc',
    });
    // One sorted map: the plan's reserved keys sort among the user keys ('_' < 'a').
    expect(Object.keys(runtimeState)).toEqual(['_plan_document', '_plan_todos', 'a', 'b']);
  });

  it('reserved keys a tool put in user state are never exported as user keys', () => {
    const session = new SessionManager();
    session.stateSet('_plan_todos', 'forged');
    session.stateSet('_search_namespace', 'legacy');
    session.stateSet('user', true);
    expect(session.snapshotDurable().runtimeState).toEqual({ user: true });
    session.plan().set([]);
    expect(session.snapshotDurable().runtimeState).toEqual({ user: true, _plan_todos: [] });
  });

  it('is a deep copy: later changes to the live session do not reach the snapshot', () => {
    const session = new SessionManager();
    session.stateSet('obj', { n: 1 });
    session.raiseInterrupt('call_1', 'ask_user', { q: 'a?' });
    session.raiseInterrupt('call_2', 'ask_user', { q: 'b?' });
    session.returnInterrupt('call_2', { answer: 'yes' });
    const snapshot = session.snapshotDurable();
    const frozen = JSON.stringify(snapshot);
    session.stateSet('obj', { n: 2 });
    session.returnInterrupt('call_1', 'late');
    session.takeResolvedInterrupt('call_2');
    session.clearInterrupts();
    expect(JSON.stringify(snapshot)).toBe(frozen);
    expect(snapshot.pending.call_1?.status).toBe('pending');
    expect(snapshot.resolved.call_2?.result).toEqual({ answer: 'yes' });
  });

  it('changing the snapshot does not change the live session', () => {
    const session = new SessionManager();
    session.raiseInterrupt('call_1', 'ask_user', { q: 'a?' });
    const snapshot = session.snapshotDurable();
    if (snapshot.pending.call_1) snapshot.pending.call_1.payload = 'changed';
    expect(session.pendingInterrupt('call_1')?.payload).toEqual({ q: 'a?' });
  });
});

describe('SessionManager loadUserAndPlanState', () => {
  it('hydrates user state and plan; reserved keys (incl. legacy _search_namespace) are not user keys', () => {
    const session = new SessionManager();
    session.stateSet('stale', 1);
    session.loadUserAndPlanState({
      user: 'v',
      _plan_todos: [{ id: '1', content: 'x', status: 'completed' }],
      _plan_document: 'doc',
      _search_namespace: 'legacy-ns',
    });
    expect(session.stateGet('user')).toBe('v');
    expect(session.stateGet('stale')).toBeUndefined();
    expect(session.stateGet('_plan_todos')).toBeUndefined();
    expect(session.stateGet('_plan_document')).toBeUndefined();
    expect(session.stateGet('_search_namespace')).toBeUndefined();
    expect(session.plan().get()).toEqual([{ id: '1', content: 'x', status: 'completed' }]);
    expect(session.plan().document()).toBe('doc');
  });

  it('is safe with null state', () => {
    const session = new SessionManager();
    session.stateSet('x', 1);
    session.loadUserAndPlanState(null);
    expect(session.stateGet('x')).toBeUndefined();
    expect(session.plan().get()).toBeNull();
  });

  it('a malformed plan changes nothing', () => {
    const session = new SessionManager();
    session.stateSet('x', 1);
    expect(() => session.loadUserAndPlanState({ y: 2, _plan_todos: [{ id: 1 }] })).toThrow(
      SessionError,
    );
    expect(session.stateGet('x')).toBe(1);
    expect(session.stateGet('y')).toBeUndefined();
  });
});

describe('SessionManager interrupts', () => {
  it('returnInterrupt resolves a pending interrupt once', () => {
    const session = new SessionManager();
    session.raiseInterrupt('call_1', 'ask_user', { q: '?' });
    expect(session.hasPendingInterrupt()).toBe(true);
    const resolved = session.returnInterrupt('call_1', { a: 'yes' });
    expect(resolved).toMatchObject({ id: 'call_1', status: 'resolved', result: { a: 'yes' } });
    expect(session.hasPendingInterrupt()).toBe(false);
    expect(session.pendingInterrupt('call_1')).toBeUndefined();
    expect(() => session.returnInterrupt('call_1', 'again')).toThrow(
      expect.objectContaining({
        code: 'interrupt_not_found',
        message: expect.stringContaining('already resolved'),
      }),
    );
  });

  it('returnInterrupt of an unknown id is interrupt_not_found', () => {
    const session = new SessionManager();
    expect(() => session.returnInterrupt('nope', null)).toThrow(
      expect.objectContaining({ code: 'interrupt_not_found' }),
    );
  });

  it('takeResolvedInterrupt removes and returns the answer exactly once', () => {
    const session = new SessionManager();
    session.raiseInterrupt('call_1', 'ask_user', null);
    expect(session.takeResolvedInterrupt('call_1')).toBeUndefined();
    session.returnInterrupt('call_1', 42);
    expect(session.takeResolvedInterrupt('call_1')?.result).toBe(42);
    expect(session.takeResolvedInterrupt('call_1')).toBeUndefined();
  });

  it('clearInterrupts drops pending and resolved', () => {
    const session = new SessionManager();
    session.raiseInterrupt('a', 'k', null);
    session.raiseInterrupt('b', 'k', null);
    session.returnInterrupt('b', 1);
    session.clearInterrupts();
    expect(session.hasPendingInterrupt()).toBe(false);
    expect(session.takeResolvedInterrupt('b')).toBeUndefined();
  });

  it('loadInterruptsJSON restores both maps from checkpoint JSON', () => {
    const source = new SessionManager();
    source.raiseInterrupt('a', 'ask_user', { q: 1 });
    source.raiseInterrupt('b', 'ask_user', { q: 2 });
    source.returnInterrupt('b', 'ok');
    const { pending, resolved } = source.snapshotDurable();
    const target = new SessionManager();
    target.loadInterruptsJSON(JSON.stringify(pending), JSON.stringify(resolved));
    expect(target.pendingInterrupt('a')).toEqual(source.pendingInterrupt('a'));
    expect(target.takeResolvedInterrupt('b')?.result).toBe('ok');
  });

  it('loadInterruptsJSON treats empty/null as no interrupts', () => {
    const session = new SessionManager();
    session.raiseInterrupt('a', 'k', null);
    session.loadInterruptsJSON('', null);
    expect(session.hasPendingInterrupt()).toBe(false);
  });

  it.each([
    ['{not json', '{}'],
    ['{"a":{"id":"b","kind":"k","payload":null,"status":"pending"}}', '{}'],
    ['{"a":{"id":"a","kind":"k","payload":null,"status":"resolved"}}', '{}'],
    ['{}', '{"a":{"id":"a","kind":"k","status":"resolved"}}'],
  ])('loadInterruptsJSON refuses %s / %s with invalid and changes nothing', (p, r) => {
    const session = new SessionManager();
    session.raiseInterrupt('keep', 'k', null);
    expect(() => session.loadInterruptsJSON(p, r)).toThrow(
      expect.objectContaining({ code: 'invalid' }),
    );
    expect(session.pendingInterrupt('keep')).toBeDefined();
  });
});
