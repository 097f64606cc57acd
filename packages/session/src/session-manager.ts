import { isJsonValue, type JsonValue } from '@x/wire';
import { canonicalJson, sortedRecord } from './canonical-json.js';
import { SessionError } from './errors.js';
import { describeValue, guard } from './guard.js';
import { cloneInterrupt, type Interrupt, interruptMapWithStatus } from './interrupt.js';
import { PlanStore } from './plan-store.js';
import { isReservedRuntimeStateKey } from './reserved-keys.js';
import { pathOf } from './zod-path.js';

/** What {@link SessionManager.snapshotDurable} returns: deep copies, safe to serialise. */
export interface DurableSnapshot {
  /** User state (reserved keys left out) plus the plan under its reserved keys. */
  runtimeState: Record<string, JsonValue>;
  /** Open interrupts by id. */
  pending: Record<string, Interrupt>;
  /** Answered interrupts not yet taken by their tool, by id. */
  resolved: Record<string, Interrupt>;
}

function cloneJson<T extends JsonValue>(value: T): T {
  return (
    typeof value === 'object' && value !== null ? JSON.parse(JSON.stringify(value)) : value
  ) as T;
}

// Object.fromEntries defines own properties, so a key like "__proto__" stays plain data.
function sortedMap<V>(map: ReadonlyMap<string, V>, copy: (value: V) => V): Record<string, V> {
  return sortedRecord(Object.fromEntries(map), copy);
}

/**
 * Owns the durable and live data of one agent thread (one checkpoint id, not a client
 * connection): the plan, user/tool state and interrupts. It outlives every turn; a turn's
 * {@link Runtime} is a view on it.
 *
 * @example
 * const session = new SessionManager();
 * session.stateSet('counter', 1);
 * session.plan().set([{ id: '1', content: 'Ship it', status: 'in_progress' }]);
 * const { runtimeState, pending } = session.snapshotDurable();
 */
export class SessionManager {
  readonly #plan = new PlanStore();
  #state = new Map<string, JsonValue>();
  #pending = new Map<string, Interrupt>();
  #resolved = new Map<string, Interrupt>();

  /** The plan module. Never null. */
  plan(): PlanStore {
    return this.#plan;
  }

  /** True when a non-empty todo list is present. */
  hasActivePlan(): boolean {
    return (this.#plan.get()?.length ?? 0) > 0;
  }

  /** A copy of a state value, or `undefined` when the key is not set. */
  stateGet(key: string): JsonValue | undefined {
    const value = this.#state.get(key);
    return value === undefined ? undefined : cloneJson(value);
  }

  /**
   * Stores a copy of a state value for tools and the host.
   *
   * @throws {SessionError} `invalid` when the value is not plain JSON (it must survive a
   *   checkpoint) or the key is `__proto__`.
   */
  stateSet(key: string, value: JsonValue): void {
    if (typeof key !== 'string') {
      throw new SessionError(
        'invalid',
        `a state key must be a string, received ${describeValue(key)}`,
      );
    }
    if (key === '__proto__') {
      // Not representable as a plain record key once parsed back from JSON.
      throw new SessionError('invalid', 'state key "__proto__" is not allowed: pick another key');
    }
    if (!isJsonValue(value)) {
      throw new SessionError('invalid', `state value for "${key}" is not a plain JSON value`, {
        details: { path: [key] },
      });
    }
    this.#state.set(key, cloneJson(value));
  }

  /** Removes a state value (no error when absent). */
  stateDelete(key: string): void {
    this.#state.delete(key);
  }

  /** True when any interrupt still waits for the host's answer. */
  hasPendingInterrupt(): boolean {
    return this.#pending.size > 0;
  }

  /** A copy of the open interrupt with this id, if any. */
  pendingInterrupt(id: string): Interrupt | undefined {
    const found = this.#pending.get(id);
    return found === undefined ? undefined : cloneInterrupt(found);
  }

  /** Copies of every open interrupt, ordered by id. */
  pendingInterrupts(): Interrupt[] {
    return Object.values(sortedMap(this.#pending, cloneInterrupt));
  }

  /**
   * Parks tool call `toolCallId`. Prefer {@link Runtime.raiseInterrupt}, which uses the
   * current tool call and emits the event.
   *
   * @throws {SessionError} `interrupt_pending` when that call already has an open interrupt;
   *   `invalid` when the payload is not JSON.
   */
  raiseInterrupt(
    toolCallId: string,
    kind: string,
    payload: JsonValue,
    requesters?: readonly string[],
  ): Interrupt {
    if (typeof toolCallId !== 'string' || toolCallId === '') {
      throw new SessionError('no_current_tool_call', 'an interrupt needs a tool call id to park');
    }
    if (typeof kind !== 'string' || kind === '') {
      throw new SessionError('invalid', 'an interrupt needs a non-empty kind');
    }
    if (
      requesters !== undefined &&
      !guard(
        'requesters',
        () =>
          Array.isArray(requesters) && requesters.every((r) => typeof r === 'string' && r !== ''),
      )
    ) {
      throw new SessionError('invalid', 'interrupt requesters must be a list of non-empty ids');
    }
    if (this.#pending.has(toolCallId)) {
      throw new SessionError(
        'interrupt_pending',
        `tool call "${toolCallId}" already has a pending interrupt: answer it with returnInterrupt first`,
      );
    }
    if (!isJsonValue(payload)) {
      throw new SessionError('invalid', 'interrupt payload is not a plain JSON value');
    }
    const interrupt: Interrupt = {
      id: toolCallId,
      kind,
      payload: cloneJson(payload),
      status: 'pending',
    };
    if (requesters !== undefined && requesters.length > 0) interrupt.requesters = [...requesters];
    this.#pending.set(toolCallId, interrupt);
    return cloneInterrupt(interrupt);
  }

  /**
   * Resolves an open interrupt with the host's answer (session-scoped: no turn needed). The
   * resolved interrupt waits until its tool takes it with {@link takeResolvedInterrupt}.
   *
   * @throws {SessionError} `interrupt_not_found` for an unknown or already resolved id;
   *   `invalid` when the result is not JSON. Nothing changes then.
   */
  returnInterrupt(id: string, result: JsonValue): Interrupt {
    if (typeof id !== 'string') {
      throw new SessionError(
        'interrupt_not_found',
        `interrupt id must be a string, received ${describeValue(id)}`,
      );
    }
    const pending = this.#pending.get(id);
    if (pending === undefined) {
      const why = this.#resolved.has(id) ? 'is already resolved' : 'is not pending';
      throw new SessionError('interrupt_not_found', `interrupt "${id}" ${why}`);
    }
    if (!isJsonValue(result)) {
      throw new SessionError('invalid', 'interrupt result is not a plain JSON value');
    }
    const resolved: Interrupt = { ...pending, status: 'resolved', result: cloneJson(result) };
    this.#pending.delete(id);
    this.#resolved.set(id, resolved);
    return cloneInterrupt(resolved);
  }

  /** Removes and returns the resolved interrupt with this id: each answer is taken once. */
  takeResolvedInterrupt(id: string): Interrupt | undefined {
    const found = this.#resolved.get(id);
    if (found === undefined) return undefined;
    this.#resolved.delete(id);
    return found;
  }

  /** Drops every pending and resolved interrupt (steer / cancel finalisation). */
  clearInterrupts(): void {
    this.#pending.clear();
    this.#resolved.clear();
  }

  /**
   * Replaces the interrupt maps with the ones in checkpoint JSON (objects keyed by id). An
   * empty string or `null` means none.
   *
   * @throws {SessionError} `invalid` for malformed JSON or a map whose key is not its
   *   interrupt's id, or whose statuses do not match the map; nothing changes.
   */
  loadInterruptsJSON(pendingJSON: string | null, resolvedJSON: string | null): void {
    const pending = guard('pending interrupts', () => parseInterruptMap(pendingJSON, 'pending'));
    const resolved = guard('resolved interrupts', () =>
      parseInterruptMap(resolvedJSON, 'resolved'),
    );
    this.#pending = pending;
    this.#resolved = resolved;
  }

  /** Like {@link loadInterruptsJSON}, from already parsed records. */
  loadInterrupts(
    pending: Readonly<Record<string, unknown>>,
    resolved: Readonly<Record<string, unknown>>,
  ): void {
    const p = guard('pending interrupts', () => checkInterruptMap(pending, 'pending'));
    const r = guard('resolved interrupts', () => checkInterruptMap(resolved, 'resolved'));
    this.#pending = p;
    this.#resolved = r;
  }

  /**
   * Replaces user state and plan with a checkpoint's runtime state. Reserved keys (plan
   * keys and the legacy `_search_namespace`) feed the plan or are dropped; they never
   * become user keys.
   *
   * @throws {SessionError} `invalid` for a malformed plan or a non-JSON value; nothing changes.
   */
  loadUserAndPlanState(state: Readonly<Record<string, unknown>> | null | undefined): void {
    guard('runtime state', () => this.#loadUserAndPlanState(state));
  }

  #loadUserAndPlanState(state: Readonly<Record<string, unknown>> | null | undefined): void {
    if (
      state !== undefined &&
      state !== null &&
      (typeof state !== 'object' || Array.isArray(state))
    ) {
      throw new SessionError(
        'invalid',
        `runtime state must be an object, received ${describeValue(state)}`,
      );
    }
    const next = new Map<string, JsonValue>();
    for (const [key, value] of Object.entries(state ?? {})) {
      if (isReservedRuntimeStateKey(key)) continue;
      if (!isJsonValue(value)) {
        throw new SessionError('invalid', `runtime state "${key}" is not a plain JSON value`, {
          details: { path: [key] },
        });
      }
      next.set(key, cloneJson(value));
    }
    this.#plan.loadFromState(state);
    this.#state = next;
  }

  /**
   * Deep copies of user state, plan and interrupts for a checkpoint, so serialising the
   * snapshot never races later changes to the live session. Reserved keys found in user
   * state are never exported as user keys; the plan is written by {@link PlanStore.exportInto}.
   * Every map is sorted by key, and so is every object inside a state value, payload or
   * result, at every depth: equal sessions give byte-equal JSON however their values were built.
   */
  snapshotDurable(): DurableSnapshot {
    const state: Record<string, JsonValue> = Object.fromEntries(
      [...this.#state].filter(([key]) => !isReservedRuntimeStateKey(key)),
    );
    // The plan's values have a fixed shape (todos in schema field order), so only the user
    // values are made canonical; the record itself is then sorted with the plan keys in it.
    for (const key of Object.keys(state)) state[key] = canonicalJson(state[key] as JsonValue);
    this.#plan.exportInto(state);
    return {
      runtimeState: sortedRecord(state, (value) => value),
      pending: sortedMap(this.#pending, cloneInterrupt),
      resolved: sortedMap(this.#resolved, cloneInterrupt),
    };
  }
}

function parseInterruptMap(
  json: string | null,
  status: Interrupt['status'],
): Map<string, Interrupt> {
  if (json === null || json === '') return new Map();
  if (typeof json !== 'string') {
    throw new SessionError(
      'invalid',
      `${status} interrupts must be JSON text or null, received ${describeValue(json)}`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (cause) {
    throw new SessionError('invalid', `${status} interrupts are not valid JSON`, { cause });
  }
  if (raw === null) return new Map();
  return checkInterruptMap(raw, status);
}

function checkInterruptMap(raw: unknown, status: Interrupt['status']): Map<string, Interrupt> {
  const parsed = interruptMapWithStatus(status).safeParse(raw);
  if (!parsed.success) {
    throw new SessionError(
      'invalid',
      `${status} interrupts: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      {
        cause: parsed.error,
        details: { path: pathOf(parsed.error) },
      },
    );
  }
  const out = new Map<string, Interrupt>();
  for (const [key, value] of Object.entries(parsed.data))
    out.set(key, cloneInterrupt(value as Interrupt));
  return out;
}
