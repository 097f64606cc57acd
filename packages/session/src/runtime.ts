import type { JsonValue } from '@x/wire';
import type { CheckpointStore } from './checkpoint-store.js';
import { SessionError } from './errors.js';
import type { EventSink } from './event-channel.js';
import { guard } from './guard.js';
import { type Interrupt, InterruptSchema } from './interrupt.js';
import type { SessionManager } from './session-manager.js';
import type { Todo } from './todo.js';

/** Options of {@link createRuntime}. */
export interface RuntimeOptions {
  /** The session the turn works on; it outlives the Runtime. */
  session: SessionManager;
  /** Where the turn's stream events go (from {@link createEventChannel}). */
  events: EventSink;
  /** The checkpoint store, for tools that persist on their own. Default: none. */
  store?: CheckpointStore;
  /** The tool call being run, if any. Usually set later with {@link Runtime.withToolCall}. */
  currentToolCallId?: string;
}

/**
 * The tool-facing surface of one turn: progress and plan events, session state, interrupts,
 * the checkpoint store and the id of the tool call being run. Create one when a turn starts,
 * drop it when the turn ends; session data lives on {@link SessionManager} and outlives it.
 * Copies made with {@link withToolCall} share the event sink and the session.
 */
export class Runtime {
  /** The checkpoint store given at creation, if any. */
  readonly store: CheckpointStore | undefined;
  /** The tool call this Runtime acts for (`undefined` outside a tool call). */
  readonly currentToolCallId: string | undefined;
  readonly #session: SessionManager;
  readonly #events: EventSink;

  /**
   * @throws {SessionError} `invalid` when `session` or `events` is missing or is not what it
   *   should be, so a turn never starts with nowhere to park or to report an interrupt.
   */
  constructor(options: RuntimeOptions) {
    guard('createRuntime options', () => checkOptions(options));
    this.#session = options.session;
    this.#events = options.events;
    this.store = options.store;
    this.currentToolCallId = options.currentToolCallId;
  }

  /** A copy of this Runtime acting for tool call `toolCallId` (same sink, same session). */
  withToolCall(toolCallId: string): Runtime {
    return new Runtime({
      session: this.#session,
      events: this.#events,
      ...(this.store === undefined ? {} : { store: this.store }),
      currentToolCallId: toolCallId,
    });
  }

  #toolCallId(what: string): string {
    const id = this.currentToolCallId;
    if (id === undefined || id === '') {
      throw new SessionError(
        'no_current_tool_call',
        `${what} needs a current tool call: use runtime.withToolCall(id) for the tool being run`,
      );
    }
    return id;
  }

  /**
   * Sends a progress update for the current tool call. Never blocks (see the channel policy).
   *
   * @throws {SessionError} `no_current_tool_call` outside a tool call.
   */
  emitUpdate(message: string): void {
    const toolCallId = this.#toolCallId('emitUpdate');
    this.#events.emit({ type: 'tool-progress', toolCallId, message });
  }

  /** Sends a `plan-updated` event with a copy of `plan`. Never blocks. */
  emitPlanUpdate(plan: readonly Todo[]): void {
    this.#events.emit({ type: 'plan-updated', todos: plan.map((todo) => ({ ...todo })) });
  }

  /** A copy of a session value, or `undefined` when not set. */
  stateGet(key: string): JsonValue | undefined {
    return this.#session.stateGet(key);
  }

  /** Stores a session value; see {@link SessionManager.stateSet}. */
  stateSet(key: string, value: JsonValue): void {
    this.#session.stateSet(key, value);
  }

  /** Removes a session value. */
  stateDelete(key: string): void {
    this.#session.stateDelete(key);
  }

  /**
   * Parks the current tool call until the host answers, and emits `interrupt-raised`.
   *
   * @throws {SessionError} `no_current_tool_call` outside a tool call; `interrupt_pending`
   *   when this call already has an open interrupt.
   */
  raiseInterrupt(kind: string, payload: JsonValue): Interrupt {
    const toolCallId = this.#toolCallId('raiseInterrupt');
    const raised = this.#session.raiseInterrupt(toolCallId, kind, payload);
    this.#events.emit({ type: 'interrupt-raised', toolCallId, kind, payload: raised.payload });
    return raised;
  }

  /**
   * Resolves an open interrupt with the host's answer and emits `interrupt-resolved`.
   * Prefer {@link SessionManager.returnInterrupt} when no turn is running.
   *
   * @throws {SessionError} `interrupt_not_found` for an unknown or already resolved id.
   */
  returnInterrupt(id: string, result: JsonValue): Interrupt {
    const resolved = this.#session.returnInterrupt(id, result);
    this.#events.emit({
      type: 'interrupt-resolved',
      toolCallId: id,
      result: resolved.result ?? null,
    });
    return resolved;
  }

  /** A copy of the open interrupt for tool call `id`, if any. */
  pendingInterrupt(id: string): Interrupt | undefined {
    return this.#session.pendingInterrupt(id);
  }

  /** True when any interrupt of the session is still open. */
  hasPendingInterrupt(): boolean {
    return this.#session.hasPendingInterrupt();
  }

  /** Removes and returns the resolved interrupt for `id`, once. */
  takeResolvedInterrupt(id: string): Interrupt | undefined {
    return this.#session.takeResolvedInterrupt(id);
  }

  /**
   * Attaches a child agent's open interrupt to the current tool call: the parent session
   * gets an interrupt with the child's kind and payload, id = the current tool call, and
   * `requesters` = [child id, ...child's requesters]. The host answers the parent; the
   * harness routes the answer to `requesters[0]` (record it in `interruptToRequester`).
   * Emits `interrupt-raised`.
   *
   * @throws {SessionError} `no_current_tool_call`; `interrupt_pending` when the current call
   *   already has an open interrupt; `invalid` when `child` is not pending.
   */
  adoptInterrupt(child: Interrupt): Interrupt {
    const toolCallId = this.#toolCallId('adoptInterrupt');
    const parsed = guard('the child interrupt', () => InterruptSchema.safeParse(child));
    if (!parsed.success) {
      throw new SessionError(
        'invalid',
        "adoptInterrupt needs an Interrupt (a child session's pendingInterrupt(id))",
        {
          cause: parsed.error,
        },
      );
    }
    if (child.status !== 'pending') {
      throw new SessionError(
        'invalid',
        `only a pending interrupt can be adopted; "${child.id}" is ${child.status}`,
      );
    }
    const adopted = this.#session.raiseInterrupt(toolCallId, child.kind, child.payload, [
      child.id,
      ...(child.requesters ?? []),
    ]);
    this.#events.emit({
      type: 'interrupt-raised',
      toolCallId,
      kind: adopted.kind,
      payload: adopted.payload,
    });
    return adopted;
  }
}

function has(value: unknown, methods: readonly string[]): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    methods.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
  );
}

// A Runtime without a session or a sink would fail only later, half-way: raiseInterrupt
// parked the interrupt and then threw on the missing sink. Refuse it up front instead.
function checkOptions(options: RuntimeOptions): void {
  const given: unknown = options;
  if (typeof given !== 'object' || given === null) {
    throw new SessionError(
      'invalid',
      'createRuntime needs options { session, events }: pass a SessionManager and an event sink',
    );
  }
  const { session, events, store, currentToolCallId } = options;
  if (!has(session, ['raiseInterrupt', 'returnInterrupt', 'takeResolvedInterrupt', 'stateGet'])) {
    throw new SessionError(
      'invalid',
      'createRuntime needs options.session, a SessionManager: pass the session the turn works on (new SessionManager(), or the one restored from a checkpoint)',
      { details: { path: ['session'] } },
    );
  }
  if (!has(events, ['emit'])) {
    throw new SessionError(
      'invalid',
      'createRuntime needs options.events, an event sink: pass createEventChannel().sink (its emit never blocks and never throws)',
      { details: { path: ['events'] } },
    );
  }
  if (store !== undefined && !has(store, ['get', 'put'])) {
    throw new SessionError(
      'invalid',
      'createRuntime options.store must be a CheckpointStore (get, put, ...) or left out',
      { details: { path: ['store'] } },
    );
  }
  if (currentToolCallId !== undefined && typeof currentToolCallId !== 'string') {
    throw new SessionError('invalid', 'createRuntime options.currentToolCallId must be a string', {
      details: { path: ['currentToolCallId'] },
    });
  }
}

/**
 * Builds a turn-scoped {@link Runtime}. Both `session` and `events` are required and checked
 * here, not on first use.
 *
 * @throws {SessionError} `invalid` for a missing or malformed `session`, `events`, `store`
 *   or `currentToolCallId`.
 * @example
 * const { sink, events } = createEventChannel({ capacity: 64 });
 * const runtime = createRuntime({ session, events: sink, store });
 * const tool = runtime.withToolCall('toolu_1');
 * const answer = tool.takeResolvedInterrupt('toolu_1');
 * if (answer === undefined) tool.raiseInterrupt('ask_user', { question: 'Proceed?' });
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  return new Runtime(options);
}
