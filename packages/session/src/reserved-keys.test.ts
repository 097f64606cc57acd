import { describe, expect, it } from 'vitest';
import { isReservedRuntimeStateKey, stripPlanKeys } from './index.js';

describe('reserved runtime state keys', () => {
  it.each(['_plan_todos', '_plan_document', '_search_namespace'])('%s is reserved', (key) => {
    expect(isReservedRuntimeStateKey(key)).toBe(true);
  });

  it.each(['plan', 'todos', '_plan', 'search_namespace', ''])('%j is a user key', (key) => {
    expect(isReservedRuntimeStateKey(key)).toBe(false);
  });

  it('stripPlanKeys removes the plan keys and the legacy key, in place, and keeps user keys', () => {
    const state: Record<string, unknown> = {
      _plan_todos: [],
      _plan_document: 'x',
      _search_namespace: 'ns',
      user: { a: 1 },
    };
    stripPlanKeys(state);
    expect(state).toEqual({ user: { a: 1 } });
  });
});
