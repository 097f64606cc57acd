import type { Message } from '@x/wire';
import {
  CHECKPOINT_VERSION,
  type PendingToolCall,
  parseCheckpoint,
  type SessionCheckpoint,
} from './checkpoint.js';
import type { SessionManager } from './session-manager.js';

/** What {@link Checkpointer.apply} hands back to the harness: everything the session manager does not own. */
export interface AppliedCheckpoint {
  window: Message[];
  pendingToolCalls: Record<string, PendingToolCall>;
  interruptToRequester: Record<string, string>;
}

function sortedCopy<V>(
  record: Readonly<Record<string, V>>,
  copy: (value: V) => V,
): Record<string, V> {
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, copy(record[key] as V)]),
  );
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
   * interrupts: deep copies) and the harness's park maps. Map keys are sorted, so equal
   * inputs give byte-equal JSON. The window's messages are shared, not copied (it is the
   * big part, and capture must stay close to the cost of serialising it): serialise the
   * checkpoint, or do not mutate those messages while you hold it.
   */
  capture(
    window: readonly Message[],
    session: SessionManager,
    pendingToolCalls: Readonly<Record<string, PendingToolCall>> = {},
    interruptToRequester: Readonly<Record<string, string>> = {},
  ): SessionCheckpoint {
    const { runtimeState, pending, resolved } = session.snapshotDurable();
    return {
      version: CHECKPOINT_VERSION,
      window: [...window],
      runtimeState,
      interrupts: { pending, resolved },
      pendingToolCalls: sortedCopy(pendingToolCalls, (call) => ({
        id: call.id,
        name: call.name,
        input: clone(call.input),
      })),
      interruptToRequester: sortedCopy(interruptToRequester, (v) => v),
    };
  }

  /**
   * Validates the checkpoint, loads user state, plan and interrupts into `session`
   * (replacing what it held), and returns copies of what the harness must reattach.
   *
   * @throws {SessionError} `unsupported_version` / `invalid`; `session` is unchanged then.
   */
  apply(checkpoint: SessionCheckpoint, session: SessionManager): AppliedCheckpoint {
    const parsed = parseCheckpoint(clone(checkpoint));
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
