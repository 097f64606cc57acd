import { randomUUID } from 'node:crypto';
import { type StoreDatabase as Db, rowsOf, sqlStateOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import type { NotificationView } from '../../web/src/api-types.d.ts';
import { notFoundError, RunnerError } from '../errors.js';

/** Where a notification stands: waiting to be sent (again), sent, or given up (dead letter). */
export const NOTIFICATION_STATUSES = ['pending', 'delivered', 'failed'] as const;

/** Where a notification stands: waiting to be sent (again), sent, or given up (dead letter). */
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/** What an event sends on one channel, as the outbox keeps it. */
export interface NewNotification {
  /** The event's id: the idempotency key of every delivery (`webhook-id`). */
  eventId: string;
  kind: string;
  channel: string;
  /** What is sent: the Standard Webhooks `{ type, timestamp, data }`. */
  payload: unknown;
}

/** One outbox row (`runner.notifications`). */
export interface NotificationRecord extends NewNotification {
  id: string;
  status: NotificationStatus;
  /** Deliveries tried so far. */
  attempts: number;
  /** When it is due (pending), or was last tried. */
  nextAt: Date;
  /** Why the last delivery failed. */
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

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

const asDate = (value: unknown) => (value instanceof Date ? value : new Date(String(value)));

function recordOf(row: Record<string, unknown>): NotificationRecord {
  return {
    id: String(row.id),
    eventId: String(row.event_id),
    kind: String(row.kind),
    channel: String(row.channel),
    payload: typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
    status: row.status as NotificationStatus,
    attempts: Number(row.attempts),
    nextAt: asDate(row.next_at),
    lastError: row.last_error == null ? null : String(row.last_error),
    createdAt: asDate(row.created_at),
    deliveredAt: row.delivered_at == null ? null : asDate(row.delivered_at),
  };
}

/**
 * The notification outbox (`runner.notifications`, the runner's own table): rows written in
 * the transaction of the event they announce, claimed by short statements that hold no
 * transaction while a delivery is in flight.
 */
export class NotificationStore {
  constructor(private readonly db: Db) {}

  /** Writes `notifications`, due now; call it in the event's own transaction. */
  async enqueue(notifications: readonly NewNotification[]): Promise<void> {
    for (const n of notifications) {
      await this.db.execute(sql`insert into runner.notifications (id, event_id, kind, channel, payload)
        values (${randomUUID()}, ${n.eventId}, ${n.kind}, ${n.channel}, ${JSON.stringify(n.payload)}::jsonb)
        on conflict (event_id, channel) do nothing`);
    }
  }

  /**
   * Takes up to `limit` due notifications for one attempt each: counts the attempt and moves
   * them `leaseMs` ahead, so that a deliverer that dies mid-delivery leaves them due again.
   */
  async claimDue(limit: number, leaseMs: number): Promise<NotificationRecord[]> {
    const result = await this.db.execute(sql`update runner.notifications n
      set attempts = n.attempts + 1, next_at = now() + ${leaseMs} * interval '1 millisecond'
      where n.id in (select id from runner.notifications
        where status = 'pending' and next_at <= now()
        order by next_at limit ${limit} for update skip locked)
      returning n.*`);
    return rowsOf(result).map(recordOf);
  }

  /** When the next pending notification is due, or undefined when none is pending. */
  async nextDue(): Promise<Date | undefined> {
    const result = await this.db.execute(
      sql`select min(next_at) as at from runner.notifications where status = 'pending'`,
    );
    const at = rowsOf(result)[0]?.at;
    return at == null ? undefined : asDate(at);
  }

  /** Records a delivery that the receiver accepted. */
  async delivered(id: string): Promise<void> {
    await this.db.execute(sql`update runner.notifications
      set status = 'delivered', delivered_at = now(), last_error = null where id = ${id}`);
  }

  /** Records a failed delivery: due again in `retryInMs`, or failed for good (undefined). */
  async attemptFailed(id: string, error: string, retryInMs: number | undefined): Promise<void> {
    await this.db.execute(
      retryInMs === undefined
        ? sql`update runner.notifications set status = 'failed', last_error = ${error} where id = ${id}`
        : sql`update runner.notifications set last_error = ${error},
            next_at = now() + ${retryInMs} * interval '1 millisecond' where id = ${id}`,
    );
  }

  /** Notifications, newest first, of one status when given. */
  async list(options: { status?: NotificationStatus; limit?: number } = {}) {
    const limit = options.limit ?? 100;
    const result = await this.db.execute(
      options.status === undefined
        ? sql`select * from runner.notifications order by created_at desc, id limit ${limit}`
        : sql`select * from runner.notifications where status = ${options.status}
            order by created_at desc, id limit ${limit}`,
    );
    return rowsOf(result).map(recordOf);
  }

  /**
   * Makes a notification due now with its attempts counted from zero (the same event id, so
   * a receiver that had it sees a duplicate).
   * @throws not found for an unknown id; a conflict for one that is pending already.
   */
  async retry(id: string): Promise<NotificationRecord> {
    const result = await this.db.execute(sql`update runner.notifications
      set status = 'pending', attempts = 0, next_at = now()
      where id = ${id} and status <> 'pending' returning *`);
    const row = rowsOf(result)[0];
    if (row) return recordOf(row);
    const found = rowsOf(
      await this.db.execute(sql`select 1 from runner.notifications where id = ${id}`),
    );
    if (found.length === 0) throw notFoundError(`no notification has the id ${id}`);
    throw new RunnerError('conflict', `notification ${id} is waiting to be sent already`);
  }

  /**
   * Consumes the decision link `id` (of question `token`); call it in the answer's
   * transaction, so that the link is used exactly when its answer is recorded.
   * @throws a conflict for a link used before.
   */
  async useDecisionLink(id: string, token: string): Promise<void> {
    try {
      await this.db.execute(
        sql`insert into runner.decision_links (id, token) values (${id}, ${token})`,
      );
    } catch (error) {
      if (sqlStateOf(error) !== '23505') throw error;
      throw new RunnerError('conflict', 'this decision link was used already', { cause: error });
    }
  }
}
