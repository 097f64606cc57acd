import type { JsonValue } from '@x/wire';
import { z } from 'zod';
import { SessionError } from './errors.js';
import { describeValue, guard } from './guard.js';
import { PLAN_DOCUMENT_KEY, PLAN_TODOS_KEY } from './reserved-keys.js';
import { type Todo, TodoSchema } from './todo.js';
import { pathOf } from './zod-path.js';

const TodoListSchema = z.array(TodoSchema);

function copyTodos(todos: readonly Todo[]): Todo[] {
  return todos.map((todo) => ({ ...todo }));
}

/**
 * The plan of one thread: a todo list and a plaintext plan document (draft). A module of
 * {@link SessionManager}; tools reach it through the manager, not through the turn Runtime.
 *
 * The todo list has three states that must not be confused: never set (`get()` is `null`),
 * an explicit empty plan (`[]`, e.g. after every todo was deleted), and a non-empty plan.
 *
 * @example
 * const plan = new PlanStore();
 * plan.set([{ id: '1', content: 'Write tests', status: 'pending' }]);
 * plan.setDocument('Draft v1');
 */
export class PlanStore {
  #todos: Todo[] | null = null;
  #document = '';
  #documentUpdated = false;

  /**
   * A copy of the todos: `null` when no plan was ever set, `[]` for an explicit empty plan.
   * Changing the copy does not change the store.
   */
  get(): Todo[] | null {
    return this.#todos === null ? null : copyTodos(this.#todos);
  }

  /**
   * Replaces the todo list (the caller emits the `plan-updated` event separately). `null`
   * clears the plan entirely; `[]` is an explicit empty plan.
   *
   * @throws {SessionError} `invalid` when a todo does not match {@link TodoSchema}; nothing changes.
   */
  set(todos: readonly Todo[] | null): void {
    if (todos === null) {
      this.#todos = null;
      return;
    }
    const parsed = guard('plan todos', () => TodoListSchema.safeParse(todos));
    if (!parsed.success) {
      throw new SessionError('invalid', 'plan todos do not match the Todo schema', {
        cause: parsed.error,
        details: { path: pathOf(parsed.error) },
      });
    }
    this.#todos = copyTodos(parsed.data);
  }

  /** True when a todo list is present (also an explicit empty one): the write-lock unlock condition. */
  hasActive(): boolean {
    return this.#todos !== null;
  }

  /** The plaintext project plan draft (`''` when none). */
  document(): string {
    return this.#document;
  }

  /**
   * Stores the plan draft. Marks the document updated only when it replaces an existing
   * draft with different text (an edit), not on the first install of a draft.
   *
   * @throws {SessionError} `invalid` when `plan` is not a string.
   */
  setDocument(plan: string): void {
    if (typeof plan !== 'string') {
      throw new SessionError(
        'invalid',
        `the plan document must be a string, received ${describeValue(plan)}`,
      );
    }
    if (this.#document !== '' && this.#document !== plan) this.#documentUpdated = true;
    this.#document = plan;
  }

  /** Whether the document was updated (edited) since the last call; clears the flag. */
  consumeDocumentUpdated(): boolean {
    const updated = this.#documentUpdated;
    this.#documentUpdated = false;
    return updated;
  }

  /**
   * Writes the plan into a checkpoint runtime-state record, overwriting the reserved plan
   * keys with the current contents. A plan never set and an empty document leave their key
   * absent, so `null` and `[]` stay distinct after a round trip.
   */
  exportInto(state: Record<string, JsonValue>): void {
    if (this.#todos === null) delete state[PLAN_TODOS_KEY];
    else state[PLAN_TODOS_KEY] = copyTodos(this.#todos);
    if (this.#document === '') delete state[PLAN_DOCUMENT_KEY];
    else state[PLAN_DOCUMENT_KEY] = this.#document;
  }

  /**
   * Replaces the plan with the one in a checkpoint runtime-state record (also the plain
   * objects and arrays `JSON.parse` gives). A missing key means no plan / no draft;
   * `null`/`undefined` state empties the store. Loading is an install, not an edit: the
   * document-updated flag is cleared.
   *
   * @throws {SessionError} `invalid` when the stored plan is malformed; nothing changes.
   */
  loadFromState(state: Readonly<Record<string, unknown>> | null | undefined): void {
    guard('runtime state', () => this.#loadFromState(state));
  }

  #loadFromState(state: Readonly<Record<string, unknown>> | null | undefined): void {
    if (state !== undefined && state !== null && typeof state !== 'object') {
      throw new SessionError(
        'invalid',
        `runtime state must be an object, received ${describeValue(state)}`,
      );
    }
    const rawTodos = state?.[PLAN_TODOS_KEY];
    const rawDocument = state?.[PLAN_DOCUMENT_KEY];
    let todos: Todo[] | null = null;
    if (rawTodos !== undefined && rawTodos !== null) {
      const parsed = TodoListSchema.safeParse(rawTodos);
      if (!parsed.success) {
        throw new SessionError('invalid', `runtime state "${PLAN_TODOS_KEY}" is not a todo list`, {
          cause: parsed.error,
          details: { path: [PLAN_TODOS_KEY, ...pathOf(parsed.error)] },
        });
      }
      todos = copyTodos(parsed.data);
    }
    if (rawDocument !== undefined && rawDocument !== null && typeof rawDocument !== 'string') {
      throw new SessionError('invalid', `runtime state "${PLAN_DOCUMENT_KEY}" is not a string`, {
        details: { path: [PLAN_DOCUMENT_KEY] },
      });
    }
    this.#todos = todos;
    this.#document = rawDocument ?? '';
    this.#documentUpdated = false;
  }
}
