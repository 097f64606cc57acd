import {
  Checkpointer,
  type CheckpointStore,
  type SessionCheckpoint,
  SessionManager,
} from '@x/session';
import type { JsonValue, Message, ToolUseBlock } from '@x/wire';
import type { Delegation, Worker } from './delegate-port.js';

// A delegation is stored as @x/session checkpoints: the parent's thread and one per worker.
const checkpointer = new Checkpointer();

/** What a worker's checkpoint keeps beside its window and interrupts. */
interface WorkerState {
  id: string;
  task: string;
  report: string | null;
}

/** The parent's checkpoint: the delegate call pending, its relays and their routing. */
export function captureParent(
  delegation: Delegation,
  window: readonly Message[],
  use: ToolUseBlock,
): SessionCheckpoint {
  delegation.parent.stateSet('delegate', {
    toolCallId: delegation.toolCallId,
    workers: delegation.workers.map((w) => ({ id: w.id, task: w.task })),
  });
  return checkpointer.capture(
    window,
    delegation.parent,
    { [use.id]: { id: use.id, name: use.name, input: use.input } },
    delegation.interruptToRequester,
  );
}

/** A worker's checkpoint: its window, its open interrupt, its task and report. */
export function captureWorker(worker: Worker): SessionCheckpoint {
  const state: WorkerState = { id: worker.id, task: worker.task, report: worker.report ?? null };
  worker.session.stateSet('worker', state as unknown as JsonValue);
  return checkpointer.capture(worker.window, worker.session);
}

/** The workers' ids named in a parent checkpoint. */
export function workerIdsOf(parent: SessionCheckpoint): string[] {
  const state = parent.runtimeState.delegate as { workers?: Array<{ id: string }> } | undefined;
  return (state?.workers ?? []).map((w) => w.id);
}

/** Rebuilds a delegation from the parent's checkpoint and each worker's. */
export function restoreDelegation(
  parent: SessionCheckpoint,
  workers: readonly SessionCheckpoint[],
): Delegation {
  const session = new SessionManager();
  const applied = checkpointer.apply(parent, session);
  const state = parent.runtimeState.delegate as { toolCallId: string };
  return {
    toolCallId: state.toolCallId,
    parent: session,
    interruptToRequester: applied.interruptToRequester,
    workers: workers.map((checkpoint) => {
      const own = new SessionManager();
      const { window } = checkpointer.apply(checkpoint, own);
      const saved = checkpoint.runtimeState.worker as unknown as WorkerState;
      return {
        id: saved.id,
        task: saved.task,
        session: own,
        window,
        ...(saved.report === null ? {} : { report: saved.report }),
      };
    }),
  };
}

/** A worker's checkpoint thread: beside its parent's. */
export function workerThread(parentThread: string, workerId: string): string {
  return `${parentThread}.${workerId}`;
}

/**
 * Writes the parent's checkpoint (thread `parentThread`) and each worker's, each only if its
 * stored revision is the one in `revisions` (none: a new thread); `revisions` is updated.
 */
export async function putDelegation(
  store: CheckpointStore,
  parentThread: string,
  delegation: Delegation,
  parent: { window: readonly Message[]; use: ToolUseBlock },
  revisions: Map<string, number>,
): Promise<void> {
  const put = async (thread: string, checkpoint: SessionCheckpoint) => {
    const expectedRevision = revisions.get(thread) ?? null;
    revisions.set(thread, await store.put(thread, checkpoint, { expectedRevision }));
  };
  await put(parentThread, captureParent(delegation, parent.window, parent.use));
  for (const worker of delegation.workers) {
    await put(workerThread(parentThread, worker.id), captureWorker(worker));
  }
}

/** Reads a delegation written by {@link putDelegation}, with each thread's revision. */
export async function getDelegation(
  store: CheckpointStore,
  parentThread: string,
): Promise<{ delegation: Delegation; revisions: Map<string, number> } | undefined> {
  const parent = await store.get(parentThread);
  if (!parent) return undefined;
  const revisions = new Map([[parentThread, parent.revision]]);
  const workers: SessionCheckpoint[] = [];
  for (const id of workerIdsOf(parent.checkpoint)) {
    const thread = workerThread(parentThread, id);
    const worker = await store.get(thread);
    if (!worker) throw new Error(`worker ${id} of ${parentThread} has no checkpoint`);
    revisions.set(thread, worker.revision);
    workers.push(worker.checkpoint);
  }
  return { delegation: restoreDelegation(parent.checkpoint, workers), revisions };
}
