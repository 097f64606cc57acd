import type { AnsweredPause, ResumeAnswer } from '@x/askuser';
import { createSuspension, type Suspension } from '@x/continuation';
import type { ClaimedRun, RunJob } from '@x/continuation-postgres';
import { assistantMessage, type ToolUseBlock } from '@x/wire';
import type { FlowContext } from './flow.js';
import type { ExecutiveDatabase, ExecutiveStorage } from './storage.js';
import type { RunResult } from './suspend.js';

/** The kind of a run that names none in its meta: the executive's own turn loop ({@link turnKind}). */
export const TURN_KIND = 'turn';

/**
 * The kind a run was started as: `meta.kind`, recorded with the run when it starts (e.g. the
 * `meta` of `suspendNewRun`); {@link TURN_KIND} when it names none.
 */
export function runKindOf(meta: unknown): string {
  const kind = (meta as { kind?: unknown } | null)?.kind;
  return typeof kind === 'string' ? kind : TURN_KIND;
}

/**
 * The start of an accept's content when a person approved a call with changed arguments (the
 * approval center's "Approve with changes" sends it): a kind that cannot change a call's
 * arguments must refuse such a call rather than run it as asked.
 */
export const CHANGED_APPROVAL_PREFIX = 'approved with changes:';

/** Whether an accept's content asks for changed arguments ({@link CHANGED_APPROVAL_PREFIX}). */
export function isChangedApproval(content: string | null | undefined): boolean {
  return (content ?? '').trim().toLowerCase().startsWith(CHANGED_APPROVAL_PREFIX);
}

/** What a {@link RunKind} resumes a run from: its claim, its stored state and its answer. */
export interface ResumingRun<S extends ExecutiveStorage = ExecutiveStorage> {
  /** The storage and events the kind's writes go through. */
  flow: FlowContext;
  /** `flow.storage`, as the app's storage type (the one the run was claimed from). */
  storage: S;
  /**
   * The claim, held under its lease: `job.signal` aborts when the lease is lost or the grace
   * of a stop ran out. Its writes (`job.finish`, `job.complete` and the package's resume
   * writes such as `finishTurn`) commit only while the lease holds, else throw `lease_lost`.
   */
  job: RunJob;
  /** The run's stored state: the continuation saved when it suspended. */
  suspension: Suspension;
  /** The answer it resumes from: the person's, or its question's default once the deadline passed. */
  answer: ResumeAnswer;
  /** The deadline whose default `answer` is; null when a person answered. */
  expiredAt: Date | null;
  /** The question as the deadline sweep resolved it, when the run was claimed at its due time. */
  resolved: AnsweredPause | undefined;
}

/** What a {@link RunKind.due} takes over: a run claimed at its due time, with no answer. */
export type DueRun<S extends ExecutiveStorage = ExecutiveStorage> = Pick<
  ResumingRun<S>,
  'flow' | 'storage' | 'job' | 'suspension'
>;

/**
 * How runs of one kind are resumed. The worker calls {@link RunKind.resume} exactly once per
 * answer set, under the run's lease; the returned result is how the attempt ended, and a
 * throw is a failed attempt (retried unless marked `retryable: false`).
 *
 * @example
 * const echo: RunKind = {
 *   async resume({ job, suspension, answer }) {
 *     const messages = [...(suspension.messages ?? []), assistantMessage(answer.content ?? '')];
 *     await job.complete(messages);
 *     return { status: 'completed', runId: job.run.runId, conversationId: job.run.conversationId, messages };
 *   },
 * };
 */
export interface RunKind<S extends ExecutiveStorage = ExecutiveStorage> {
  /**
   * Why this kind cannot resume a claimed run (e.g. its state waits on a tool this app does
   * not offer); undefined when it can. A refused run fails and is not retried, unless its
   * answer is a cancel, which resumes nothing.
   */
  refuse?(run: ClaimedRun): string | undefined;
  resume(run: ResumingRun<S>): Promise<RunResult>;
  /**
   * A run claimed at its due time with no answer, handed over whole instead of the
   * executive's sweep of the one question the run waits on: for a kind whose run waits on
   * several questions (it applies their reminders, escalations and deadlines under the lease,
   * then resumes the run or makes it wait again). Without it, the executive's sweep applies.
   */
  due?(run: DueRun<S>): Promise<RunResult>;
}

/**
 * Saves, inside `tx`, the continuation `token` of a kind's stopped run: a tool call named
 * `name` whose input is the kind's own record of the stop, read back by {@link kindStopOf}.
 */
export async function saveKindStop(
  storage: ExecutiveStorage,
  tx: ExecutiveDatabase,
  run: { runId: string; conversationId: string },
  token: string,
  name: string,
  input: ToolUseBlock['input'],
): Promise<void> {
  const use = { type: 'tool_use' as const, id: token, name, input };
  await storage.continuations(tx).save(
    createSuspension({
      interactionId: token,
      sessionId: run.conversationId,
      runId: run.runId,
      toolUseId: token,
      assistant: assistantMessage(use),
    }),
  );
}

/** What {@link saveKindStop} recorded as `name`'s stop, or undefined for another continuation. */
export function kindStopOf(suspension: Suspension, name: string): unknown {
  return suspension.toolName === name ? suspension.toolInput : undefined;
}
