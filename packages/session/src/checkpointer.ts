import { isJsonValue, type Message } from '@x/wire';
import { canonicalJson, sortedRecord } from './canonical-json.js';
import {
  CHECKPOINT_VERSION,
  type PendingToolCall,
  parseCheckpoint,
  type SessionCheckpoint,
} from './checkpoint.js';
import { SessionError } from './errors.js';
import { guard } from './guard.js';
import type { SessionManager } from './session-manager.js';

/** What {@link Checkpointer.apply} hands back to the harness: everything the session manager does not own. */
export interface AppliedCheckpoint {
  window: Message[];
  pendingToolCalls: Record<string, PendingToolCall>;
  interruptToRequester: Record<string, string>;
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/**
 * Builds and applies {@link SessionCheckpoint}s. It owns neither the live session data (the
 * {@link SessionManager} does) nor persistence (a {@link CheckpointStore} does): `capture`
 * and `apply` are pure over their inputs, so the wire format is testable without a store.
 *
 * @example
 * const checkpointer = new Checkpointer();
 * const checkpoint = checkpointer.capture(window, session, pendingToolCalls, interruptToRequester);
 * const revision = await store.put(threadId, checkpoint, { expectedRevision: null });
 * // later, in another process:
 * const stored = await store.get(threadId);
 * const restored = new SessionManager();
 * const { window: w } = checkpointer.apply(stored!.checkpoint, restored);
 */
export class Checkpointer {
  /**
   * Assembles a checkpoint from the message window, the session manager (user state, plan,
   * interrupts: deep copies) and the harness's park maps. Every map is sorted by key, and so
   * is every object inside a state value, interrupt payload or result and pending tool input,
   * at every depth, so equal inputs give byte-equal JSON. The window is kept as given (it is
   * the transcript a provider gets back) and its messages are shared, not copied (it is the
   * big part, and capture must stay close to the cost of serialising it): serialise the
   * checkpoint, or do not mutate those messages while you hold it.
   *
   * @throws {SessionError} `invalid` when a pending tool call's input is not a JSON value.
   */
  capture(
    window: readonly Message[],
    session: SessionManager,
    pendingToolCalls: Readonly<Record<string, PendingToolCall>> = {},
    interruptToRequester: Readonly<Record<string, string>> = {},
  ): SessionCheckpoint {
    return guard('capture input', () =>
      this.#capture(window, session, pendingToolCalls, interruptToRequester),
    );
  }

  #capture(
    window: readonly Message[],
    session: SessionManager,
    pendingToolCalls: Readonly<Record<string, PendingToolCall>>,
    interruptToRequester: Readonly<Record<string, string>>,
  ): SessionCheckpoint {
    const { runtimeState, pending, resolved } = session.snapshotDurable();
    return {
      version: CHECKPOINT_VERSION,
      window: [...window],
      runtimeState,
      interrupts: { pending, resolved },
      pendingToolCalls: sortedRecord(pendingToolCalls, (call) => {
        if (!isJsonValue(call.input)) {
          throw new SessionError(
            'invalid',
            `pending tool call "${call.id}" has an input that is not a plain JSON value: give its parsed JSON input`,
            { details: { path: ['pendingToolCalls', call.id, 'input'] } },
          );
        }
        return { id: call.id, name: call.name, input: canonicalJson(call.input) };
      }),
      interruptToRequester: sortedRecord(interruptToRequester, (v) => v),
    };
  }

  /**
   * Validates the checkpoint, loads user state, plan and interrupts into `session`
   * (replacing what it held), and returns copies of what the harness must reattach.
   *
   * @throws {SessionError} `unsupported_version` / `invalid`; `session` is unchanged then.
   */
  apply(checkpoint: SessionCheckpoint, session: SessionManager): AppliedCheckpoint {
    // Validate what was given (a NaN is invalid, not the null JSON would make of it), then
    // copy it, so nothing returned or loaded is shared with the caller's object.
    const parsed = clone(parseCheckpoint(checkpoint));
    // The schema already checked the plan keys and interrupt maps, so neither load can fail
    // half-way: the session is either fully replaced or untouched.
    session.loadUserAndPlanState(parsed.runtimeState);
    session.loadInterrupts(parsed.interrupts.pending, parsed.interrupts.resolved);
    return {
      window: parsed.window,
      pendingToolCalls: parsed.pendingToolCalls,
      interruptToRequester: parsed.interruptToRequester,
    };
  }
}
