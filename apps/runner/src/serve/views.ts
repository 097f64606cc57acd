import type { PauseRecord, Pending, ResumeAction } from '@x/askuser';
import { suspensions } from '@x/continuation-postgres';
import { inArray } from 'drizzle-orm';
import type { Storage } from '../storage.js';

/** A pending question as the API shows it. */
export interface PauseView {
  token: string;
  conversationId: string;
  kind: string;
  question: string;
  /** The choices offered, or `null` for a free answer. */
  options: string[] | null;
  priority: number;
  /** The child thread the question was relayed from, or `''` for the conversation itself. */
  proxiedFromChildId: string;
  createdAt: string;
  /** Milliseconds since the question was asked (server clock). */
  ageMs: number;
}

/**
 * Where a question stands: `pending` (no answer yet), `answered` (waiting for a wake loop
 * to resume its run), `resumed` (its run was resumed to an end, or stopped), `closed`
 * (answered, but no run is saved for it, so nothing will resume).
 */
export type PauseStatus = 'pending' | 'answered' | 'resumed' | 'closed';

/** How the run behind a resumed question ended, as far as the server can tell. */
export type RunOutcome = 'completed' | 'waiting' | 'cancelled';

/** A question of the recent list, pending or answered, with its run's state. */
export interface RecentView {
  token: string;
  conversationId: string;
  kind: string;
  question: string;
  priority: number;
  proxiedFromChildId: string;
  createdAt: string;
  answeredAt: string | null;
  answer: { action: ResumeAction; content: string } | null;
  status: PauseStatus;
  /** For `resumed`: how the run went on (a new question → `waiting`). */
  outcome: RunOutcome | null;
}

function optionsOf(value: unknown): string[] | null {
  if (!Array.isArray(value)) return null;
  return value.map((option) => (typeof option === 'string' ? option : JSON.stringify(option)));
}

/** The API view of a pending pause. */
export function pauseView(pause: Pending, now = Date.now()): PauseView {
  return {
    token: pause.token,
    conversationId: pause.conversationId,
    kind: pause.kind,
    question: pause.question,
    options: optionsOf(pause.options),
    priority: pause.priority,
    proxiedFromChildId: pause.proxiedFromChildId,
    createdAt: pause.createdAt.toISOString(),
    ageMs: Math.max(0, now - pause.createdAt.getTime()),
  };
}

/** Outcomes the server saw itself (its own wake loop), by token; they beat inference. */
export type KnownOutcomes = ReadonlyMap<string, RunOutcome>;

/**
 * The most recent questions with their run state: the pause rows (`listRecent`) and, in one
 * more query, whether each one's saved run is still unresolved.
 */
export async function recentViews(
  storage: Storage,
  limit: number,
  known: KnownOutcomes = new Map(),
): Promise<RecentView[]> {
  const records = await storage.pauses().listRecent(limit);
  const tokens = records.map((r) => r.token);
  const runs = new Map<string, boolean>();
  if (tokens.length) {
    const rows = await storage.db
      .select({ token: suspensions.interactionId, resolved: suspensions.resolved })
      .from(suspensions)
      .where(inArray(suspensions.interactionId, tokens));
    for (const row of rows) runs.set(row.token, row.resolved);
  }
  return records.map((record) => recentView(record, runs.get(record.token), records, known));
}

function recentView(
  record: PauseRecord,
  runResolved: boolean | undefined,
  all: readonly PauseRecord[],
  known: KnownOutcomes,
): RecentView {
  const status: PauseStatus = !record.resumed
    ? 'pending'
    : runResolved === undefined
      ? 'closed'
      : runResolved
        ? 'resumed'
        : 'answered';
  let outcome: RunOutcome | null = null;
  if (status === 'resumed') {
    outcome = known.get(record.token) ?? inferOutcome(record, all);
  }
  return {
    token: record.token,
    conversationId: record.conversationId,
    kind: record.kind,
    question: record.question,
    priority: record.priority,
    proxiedFromChildId: record.proxiedFromChildId,
    createdAt: record.createdAt.toISOString(),
    answeredAt: record.resumedAt?.toISOString() ?? null,
    answer: record.answer,
    status,
    outcome,
  };
}

// A resumed run that asked again saved its new question in the same transaction that
// resolved the old one, so a later question of the same conversation means "waiting".
function inferOutcome(record: PauseRecord, all: readonly PauseRecord[]): RunOutcome {
  if (record.answer?.action === 'cancel') return 'cancelled';
  const answeredAt = record.resumedAt?.getTime() ?? 0;
  const askedAgain = all.some(
    (other) =>
      other.token !== record.token &&
      other.conversationId === record.conversationId &&
      other.createdAt.getTime() >= answeredAt,
  );
  return askedAgain ? 'waiting' : 'completed';
}
