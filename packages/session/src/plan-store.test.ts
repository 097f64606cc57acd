import { describe, expect, it } from 'vitest';
import { PlanStore, SessionError, type Todo } from './index.js';

const todos: Todo[] = [
  { id: '1', content: 'Research', status: 'completed' },
  { id: '2', content: 'Write', status: 'in_progress' },
];

describe('PlanStore todos', () => {
  it('get is null when no plan was ever set', () => {
    const plan = new PlanStore();
    expect(plan.get()).toBeNull();
    expect(plan.hasActive()).toBe(false);
  });

  it('an explicit empty plan is [] (not null) and counts as present', () => {
    const plan = new PlanStore();
    plan.set([]);
    expect(plan.get()).toEqual([]);
    expect(plan.get()).not.toBeNull();
    expect(plan.hasActive()).toBe(true);
  });

  it('set(null) clears the plan entirely', () => {
    const plan = new PlanStore();
    plan.set(todos);
    plan.set(null);
    expect(plan.get()).toBeNull();
    expect(plan.hasActive()).toBe(false);
  });

  it('get returns a copy: changing it does not change the store', () => {
    const plan = new PlanStore();
    plan.set(todos);
    const copy = plan.get();
    copy?.push({ id: '3', content: 'x', status: 'pending' });
    if (copy?.[0]) copy[0].status = 'pending';
    expect(plan.get()).toEqual(todos);
  });

  it('set copies its input: changing the array afterwards does not change the store', () => {
    const plan = new PlanStore();
    const input = todos.map((t) => ({ ...t }));
    plan.set(input);
    input.pop();
    expect(plan.get()).toEqual(todos);
  });

  it('refuses a malformed todo with invalid and keeps the old plan', () => {
    const plan = new PlanStore();
    plan.set(todos);
    const bad = [{ id: '1', content: 'x', status: 'done' }] as unknown as Todo[];
    expect(() => plan.set(bad)).toThrow(expect.objectContaining({ code: 'invalid' }));
    expect(plan.get()).toEqual(todos);
  });
});

describe('PlanStore document', () => {
  it('the first install of a draft does not mark the document updated', () => {
    const plan = new PlanStore();
    plan.setDocument('v1');
    expect(plan.document()).toBe('v1');
    expect(plan.consumeDocumentUpdated()).toBe(false);
  });

  it('replacing an existing draft with different text marks it updated', () => {
    const plan = new PlanStore();
    plan.setDocument('v1');
    plan.setDocument('v2');
    expect(plan.document()).toBe('v2');
    expect(plan.consumeDocumentUpdated()).toBe(true);
  });

  it('replacing a draft with the same text does not mark it updated', () => {
    const plan = new PlanStore();
    plan.setDocument('v1');
    plan.setDocument('v1');
    expect(plan.consumeDocumentUpdated()).toBe(false);
  });

  it('consumeDocumentUpdated returns the flag once and clears it', () => {
    const plan = new PlanStore();
    plan.setDocument('v1');
    plan.setDocument('v2');
    expect(plan.consumeDocumentUpdated()).toBe(true);
    expect(plan.consumeDocumentUpdated()).toBe(false);
  });

  it('after clearing the draft to empty, the next draft is an install again', () => {
    const plan = new PlanStore();
    plan.setDocument('v1');
    plan.setDocument('');
    expect(plan.consumeDocumentUpdated()).toBe(true);
    plan.setDocument('v2');
    expect(plan.consumeDocumentUpdated()).toBe(false);
  });
});

describe('PlanStore exportInto / loadFromState', () => {
  it('round-trips todos and document through runtime state (also through JSON)', () => {
    const plan = new PlanStore();
    plan.set(todos);
    plan.setDocument('the plan');
    const state = {};
    plan.exportInto(state);
    const loaded = new PlanStore();
    loaded.loadFromState(JSON.parse(JSON.stringify(state)));
    expect(loaded.get()).toEqual(todos);
    expect(loaded.document()).toBe('the plan');
  });

  it('keeps the null / [] distinction across a round trip', () => {
    const never = new PlanStore();
    const empty = new PlanStore();
    empty.set([]);
    const a = {};
    const b = {};
    never.exportInto(a);
    empty.exportInto(b);
    const x = new PlanStore();
    x.loadFromState(JSON.parse(JSON.stringify(a)));
    const y = new PlanStore();
    y.loadFromState(JSON.parse(JSON.stringify(b)));
    expect(x.get()).toBeNull();
    expect(y.get()).toEqual([]);
  });

  it('exportInto overwrites stale reserved keys with the current contents', () => {
    const plan = new PlanStore();
    const state: Record<string, import('@x/wire').JsonValue> = {
      _plan_todos: [{ id: 'old', content: 'old', status: 'pending' }],
      _plan_document: 'old',
      user: 1,
    };
    plan.exportInto(state);
    expect(state).toEqual({ user: 1 });
    plan.set(todos);
    plan.exportInto(state);
    expect(state._plan_todos).toEqual(todos);
  });

  it('loadFromState with null or undefined state empties the store', () => {
    const plan = new PlanStore();
    plan.set(todos);
    plan.setDocument('x');
    plan.loadFromState(undefined);
    expect(plan.get()).toBeNull();
    expect(plan.document()).toBe('');
    plan.loadFromState(null);
    expect(plan.get()).toBeNull();
  });

  it('loading is an install: it does not set the document-updated flag and clears it', () => {
    const plan = new PlanStore();
    plan.setDocument('a');
    plan.setDocument('b');
    plan.loadFromState({ _plan_document: 'c' });
    expect(plan.consumeDocumentUpdated()).toBe(false);
    plan.setDocument('d');
    expect(plan.consumeDocumentUpdated()).toBe(true);
  });

  it('a malformed stored plan is invalid and changes nothing', () => {
    const plan = new PlanStore();
    plan.set(todos);
    expect(() => plan.loadFromState({ _plan_todos: 'nope' })).toThrow(SessionError);
    expect(() => plan.loadFromState({ _plan_document: 5 })).toThrow(
      expect.objectContaining({ code: 'invalid' }),
    );
    expect(plan.get()).toEqual(todos);
  });
});

describe('Todo', () => {
  it('is the @x/wire stream type: same schema object', async () => {
    const wire = await import('@x/wire');
    const { TodoSchema } = await import('./index.js');
    expect(TodoSchema).toBe(wire.TodoSchema);
    expect(TodoSchema.safeParse({ id: '1', content: 'x', status: 'in_progress' }).success).toBe(
      true,
    );
    expect(TodoSchema.safeParse({ id: '1', content: 'x', status: 'done' }).success).toBe(false);
  });
});
