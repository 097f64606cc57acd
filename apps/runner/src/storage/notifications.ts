import type { NotificationView } from '@x/approval-center';
import {
  NOTIFICATION_STATUSES,
  type NotificationOutbox,
  type NotificationRecord,
  type NotificationStatus,
} from '@x/askuser';
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
