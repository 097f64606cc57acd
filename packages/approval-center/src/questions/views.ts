import {
  type Approval,
  AUTO_TERMINATED_MARKER,
  type PauseRecord,
  type Pending,
  shownOptions,
} from '@x/askuser';
import {
  type ExecutiveDatabase,
  type ExecutiveStorage,
  type GatedTools,
  gatedInputSchema,
  isGatedTool,
  type ResumeContext,
  runOf,
} from '@x/executive';
import type {
  DeadlineView,
  GatedView,
  PauseStatus,
  PauseView,
  PriorityLabel,
  ReadOnlyReason,
  RecentView,
  RunOutcome,
  RunView,
  SourceView,
} from '../contract/index.js';
import type { LiveSnapshot } from '../live/event-hub.js';

/** A run as the executive's queue records it. */
export type RunRecord = NonNullable<
  Awaited<ReturnType<ReturnType<ExecutiveStorage['runs']>['get']>>
>;

/** Where the views read: the questions and runs, and the gated tools whose calls they show. */
export interface ViewSource {
  storage: ExecutiveStorage;
  /** The gated tools whose calls are shown with their arguments' schema; none: shown as questions. */
  gatedTools?: GatedTools | undefined;
}

/**
 * The word for a priority (0 to 10, higher first): `urgent` from 5, `high` from 1, and
 * `null` for the default 0, so that a bare "p0" never reads as the most urgent.
 */
export function priorityLabel(priority: number): PriorityLabel | null {
  return priority >= 5 ? 'urgent' : priority > 0 ? 'high' : null;
}

/** The worker behind a question relayed from a sub-agent (its pause names it), or null. */
function sourceOf(pause: Pick<Pending, 'proxiedFromChildId' | 'resumeContext'>): SourceView | null {
  if (!pause.proxiedFromChildId) return null;
  const delegate = (pause.resumeContext as { delegate?: { task?: unknown } } | null)?.delegate;
  const task = delegate?.task;
  return { worker: pause.proxiedFromChildId, task: typeof task === 'string' ? task : null };
}

/** The approvals recorded so far of those questions that need a quorum, by token. */
export async function approvalsOf(
  storage: ExecutiveStorage,
  pending: readonly Pick<Pending, 'token' | 'quorum'>[],
  tx?: ExecutiveDatabase,
): Promise<Map<string, Approval[]>> {
  const found = new Map<string, Approval[]>();
  for (const p of pending) {
    if (p.quorum) found.set(p.token, await storage.pauses(tx).listApprovals(p.token));
  }
  return found;
}

/**
 * The API view of a pending question; `readOnly` why the caller may not answer it (`null`:
 * they may), `approvals` those recorded towards its quorum ({@link approvalsOf}).
 */
export function pauseView(
  source: ViewSource,
  pause: Pending,
  now = Date.now(),
  readOnly: ReadOnlyReason | null = null,
  approvals: readonly Approval[] = [],
): PauseView {
  return {
    token: pause.token,
    conversationId: pause.conversationId,
    kind: pause.kind,
    question: pause.question,
    options: shownOptions(pause.options),
    priority: pause.priority,
    priorityLabel: priorityLabel(pause.priority),
    proxiedFromChildId: pause.proxiedFromChildId,
    source: sourceOf(pause),
    createdAt: pause.createdAt.toISOString(),
    ageMs: Math.max(0, now - pause.createdAt.getTime()),
    deadline: deadlineView(pause, now),
    reminder: pause.reminder && {
      at: pause.reminder.at.toISOString(),
      remindedAt: pause.reminder.remindedAt?.toISOString() ?? null,
    },
    escalation: pause.escalation && {
      at: pause.escalation.at.toISOString(),
      names: pause.escalation.names,
      roles: pause.escalation.roles,
      escalatedAt: pause.escalation.escalatedAt?.toISOString() ?? null,
    },
    quorum: quorumView(pause, approvals),
    canAnswer: readOnly === null,
    readOnly,
    gated: gatedView(source, pause),
    ...(fixedArgumentsOf(pause) ? { fixedArguments: true } : {}),
    ...policyOf(pause.resumeContext as ResumeContext | null),
  };
}

/** Whether the asking kind cannot run the call with other arguments (approve or decline only). */
const fixedArgumentsOf = (pause: Pick<Pending, 'resumeContext'>) =>
  (pause.resumeContext as ResumeContext | null)?.fixedArguments === true;

/** Why a policy asked the question, when a rule did (or deciding failed); nothing otherwise. */
const policyOf = (context: ResumeContext | null) =>
  context?.policy ? { policy: context.policy } : {};

/** The API view of a question's quorum and the `approvals` recorded towards it, or null. */
function quorumView(pause: Pick<Pending, 'quorum'>, approvals: readonly Approval[]) {
  if (!pause.quorum) return null;
  const of = (action: string) =>
    approvals
      .filter((a) => a.action === action)
      .map((a) => ({ operator: a.operator, at: a.at.toISOString() }));
  return {
    needed: pause.quorum.approvals,
    declinesNeeded: pause.quorum.declines,
    approvals: of('accept'),
    declines: of('decline'),
  };
}

/** The API view of a gated call waiting for approval (its pause keeps tool and arguments), or null. */
function gatedView(
  { gatedTools }: ViewSource,
  pause: Pick<Pending, 'resumeContext'>,
): GatedView | null {
  const gated = (pause.resumeContext as ResumeContext | null)?.gated;
  if (!gated || !gatedTools || !isGatedTool(gatedTools, gated.tool)) return null;
  const schema = gatedInputSchema(gatedTools, gated.tool);
  return { tool: gated.tool, arguments: gated.arguments, schema };
}

/** The API view of a question's deadline, or null. */
function deadlineView(pause: Pick<Pending, 'deadline'>, now = Date.now()): DeadlineView | null {
  if (!pause.deadline) return null;
  const { at, answer } = pause.deadline;
  return { at: at.toISOString(), answer, msLeft: Math.max(0, at.getTime() - now) };
}

/**
 * The most recent questions with what their runs recorded: the questions and the runs
 * they belong to (by the run id each keeps), read in one snapshot.
 */
export async function recentViews(source: ViewSource, limit: number): Promise<RecentView[]> {
  return source.storage.snapshot((tx) => recentViewsIn(source, tx, limit));
}

/** {@link recentViews} inside the caller's snapshot `tx`. */
async function recentViewsIn(
  source: ViewSource,
  tx: ExecutiveDatabase,
  limit: number,
): Promise<RecentView[]> {
  const { storage } = source;
  const records = await storage.pauses(tx).listRecent(limit);
  const runs = await storage.runs(tx).getMany([...new Set(records.flatMap((r) => runOf(r) ?? []))]);
  const approvals = await approvalsOf(storage, records, tx);
  return records.map((record) => recentView(source, record, runs, approvals.get(record.token)));
}

/**
 * The API view of any question, pending or answered, with the state of its run (from `runs`)
 * and the approvals recorded towards its quorum ({@link approvalsOf}).
 */
export function recentView(
  source: ViewSource,
  record: PauseRecord,
  runs: ReadonlyMap<string, RunRecord>,
  approvals: readonly Approval[] = [],
): RecentView {
  const runId = runOf(record);
  const run = runId === undefined ? undefined : runs.get(runId);
  const { status, outcome } = runId === undefined ? ownless(record) : standing(record, run);
  return {
    token: record.token,
    conversationId: record.conversationId,
    kind: record.kind,
    question: record.question,
    priority: record.priority,
    priorityLabel: priorityLabel(record.priority),
    proxiedFromChildId: record.proxiedFromChildId,
    source: sourceOf(record),
    createdAt: record.createdAt.toISOString(),
    answeredAt: record.resumedAt?.toISOString() ?? null,
    answer: record.answer,
    answeredBy: record.answeredBy,
    deadline: deadlineView(record),
    expiredAt: record.expiredAt?.toISOString() ?? null,
    status,
    outcome,
    run: run ? runView(run) : null,
    quorum: quorumView(record, approvals),
    gated: gatedView(source, record),
  };
}

/** The API view of a run. */
export function runView(run: RunRecord): RunView {
  return {
    runId: run.runId,
    status: run.status,
    attempts: run.attempts,
    lastError: run.lastError,
    startedAt: run.createdAt.toISOString(),
    finishedAt: run.finishedAt?.toISOString() ?? null,
  };
}

/**
 * Where a question stands that no executive run owns (an app's own, which its app resumes):
 * `closed` only when a stop of its conversation resolved it.
 */
function ownless(record: PauseRecord): { status: PauseStatus; outcome: RunOutcome | null } {
  if (!record.resumed) return { status: 'pending', outcome: null };
  if (record.expiredAt) return { status: 'expired', outcome: null };
  const stopped = record.answer?.content === AUTO_TERMINATED_MARKER;
  return stopped
    ? { status: 'closed', outcome: 'cancelled' }
    : { status: 'answered', outcome: null };
}

function standing(
  record: PauseRecord,
  run: RunRecord | undefined,
): { status: PauseStatus; outcome: RunOutcome | null } {
  if (!record.resumed) return { status: 'pending', outcome: null };
  if (record.expiredAt)
    return { status: 'expired', outcome: standing({ ...record, expiredAt: null }, run).outcome };
  if (!run) return { status: 'closed', outcome: null };
  // The run went on to a later question: this answer's turn asked again.
  if (run.interactionId !== record.token) return { status: 'resumed', outcome: 'waiting' };
  switch (run.status) {
    case 'completed':
      return { status: 'resumed', outcome: 'completed' };
    case 'cancelled':
      return record.answer?.action === 'cancel'
        ? { status: 'resumed', outcome: 'cancelled' }
        : { status: 'closed', outcome: 'cancelled' };
    case 'failed':
      return { status: 'failed', outcome: 'failed' };
    default:
      return { status: 'answered', outcome: null };
  }
}

/** How many pending and recent questions the live feed compares. */
const LIVE_WINDOW = 200;

/**
 * The live feed's snapshot (an `EventHub`'s `snapshot`): pending and recent questions read in
 * one snapshot of the database.
 */
export function liveSnapshot(source: ViewSource): Promise<LiveSnapshot> {
  const { storage } = source;
  return storage.snapshot(async (tx) => {
    const listed = await storage.pauses(tx).listPendingAll(LIVE_WINDOW);
    const approvals = await approvalsOf(storage, listed, tx);
    return {
      pending: listed.map((p) => pauseView(source, p, Date.now(), null, approvals.get(p.token))),
      recent: await recentViewsIn(source, tx, LIVE_WINDOW),
    };
  });
}
