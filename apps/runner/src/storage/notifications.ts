import type { NotificationView } from '@x/approval-center';
import {
  NOTIFICATION_STATUSES,
  type NotificationOutbox,
  type NotificationRecord,
  type NotificationStatus,
} from '@x/askuser';
import type { SlackMessage, SlackMessageStore } from '@x/notify';
import { type StoreDatabase as Db, rowsOf, sqlStateOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { notFoundError, RunnerError } from '../errors.js';

export { NOTIFICATION_STATUSES, type NotificationRecord, type NotificationStatus };

/** A notification as `list --json` prints it, and `GET /api/notifications` returns it. */
export function notificationView(n: NotificationRecord): NotificationView {
  return {
    id: n.id,
    eventId: n.eventId,
    kind: n.kind,
    channel: n.channel,
    status: n.status,
    attempts: n.attempts,
    lastError: n.lastError,
    createdAt: n.createdAt.toISOString(),
    nextAt: n.status === 'pending' ? n.nextAt.toISOString() : null,
    deliveredAt: n.deliveredAt?.toISOString() ?? null,
    token: (n.payload as { data?: { token?: unknown } } | null)?.data?.token ?? null,
  };
}

/**
 * Makes a notification due now with its attempts counted from zero (`notifications retry`).
 * @throws not found for an unknown id; a conflict for one that is pending already.
 */
export async function retryNotification(
  outbox: NotificationOutbox,
  id: string,
): Promise<NotificationRecord> {
  const again = await outbox.retry(id);
  if (again) return again;
  if (!(await outbox.get(id))) throw notFoundError(`no notification has the id ${id}`);
  throw new RunnerError('conflict', `notification ${id} is waiting to be sent already`);
}

/**
 * Consumes the decision link `id` (of question `token`, `runner.decision_links`); call it in
 * the answer's transaction, so that the link is used exactly when its answer is recorded.
 * @throws a conflict for a link used before.
 */
export async function useDecisionLink(db: Db, id: string, token: string): Promise<void> {
  try {
    await db.execute(sql`insert into runner.decision_links (id, token) values (${id}, ${token})`);
  } catch (error) {
    if (sqlStateOf(error) !== '23505') throw error;
    throw new RunnerError('conflict', 'this decision link was used already', { cause: error });
  }
}

/** Records where question `token`'s Slack message is (`runner.slack_messages`); the last post wins. */
async function recordSlackMessage(db: Db, token: string, at: SlackMessage): Promise<void> {
  await db.execute(sql`insert into runner.slack_messages (token, channel, ts)
    values (${token}, ${at.channel}, ${at.ts})
    on conflict (token) do update set channel = excluded.channel, ts = excluded.ts`);
}

/** Where question `token`'s Slack message is, or undefined when none was posted. */
async function slackMessageOf(db: Db, token: string): Promise<SlackMessage | undefined> {
  const [row] = rowsOf(
    await db.execute(sql`select channel, ts from runner.slack_messages where token = ${token}`),
  );
  return row && { channel: String(row.channel), ts: String(row.ts) };
}

/** The Slack messages of the questions, kept in `runner.slack_messages` of `db`. */
export function slackMessages(db: Db): SlackMessageStore {
  return {
    record: (token, at) => recordSlackMessage(db, token, at),
    find: (token) => slackMessageOf(db, token),
  };
}
