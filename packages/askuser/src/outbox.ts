import { randomUUID } from 'node:crypto';
import { rowsOf } from '@x/postgres-kit';
import { type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { AskUserDatabase } from './database.js';
import { AskUserError, wrapDatabaseError } from './errors.js';

/** Where a notification stands: waiting to be sent (again), sent, or given up (the dead letter). */
export const NOTIFICATION_STATUSES = ['pending', 'delivered', 'failed'] as const;

/** Where a notification stands: waiting to be sent (again), sent, or given up (the dead letter). */
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/** What an event sends on one channel, as {@link NotificationOutbox.enqueue} takes it. */
export const newNotificationSchema = z.object({
  /** The event's id: the idempotency key of every delivery (e.g. `webhook-id`). */
  eventId: z.string().min(1),
  /** What happened, e.g. `question.created`. */
  kind: z.string().min(1),
  /** Where it goes, e.g. `webhook`, `slack`, `email`: the caller's own names. */
  channel: z.string().min(1),
  /** What is sent, as JSON. */
  payload: z.unknown(),
});

/** What an event sends on one channel. */
export type NewNotification = z.infer<typeof newNotificationSchema>;

/** One notification of the outbox (`aura.notifications`). */
export interface NotificationRecord extends NewNotification {
  id: string;
  status: NotificationStatus;
  /** Deliveries tried so far (a claim counts one). */
  attempts: number;
  /** When it is due (pending), or was last tried. */
  nextAt: Date;
  /** Why the last delivery failed. */
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

/** Options of {@link NotificationOutbox.list}. */
export interface ListNotificationsOptions {
  /** Only notifications that stand so. */
  status?: NotificationStatus;
  /** At most this many; default 100. */
  limit?: number;
  /** Only those enqueued before the notification of this id: the next page's cursor. */
  before?: string;
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

const COLUMNS = sql`id, event_id, kind, channel, payload, status, attempts, next_at, last_error,
  created_at, delivered_at`;

/**
 * The notification outbox (`aura.notifications`): what an event sends on each channel,
 * written in the transaction of the event it announces (so a rolled-back question sends
 * nothing and a saved one is never left unsent), then delivered at least once by the caller's
 * channels. A claim is a short statement that leases due notifications for one attempt; the
 * delivery holds no transaction; its outcome is recorded by one statement more. The event id
 * is each delivery's idempotency key: one event enqueued twice on a channel is kept once.
 *
 * @example
 * await db.transaction(async (tx) => {
 *   await new AskUserStore(tx).insert(pause);
 *   await new NotificationOutbox(tx).enqueue([
 *     { eventId, kind: 'question.created', channel: 'webhook', payload: { token } },
 *   ]);
 * });
 * for (const n of await new NotificationOutbox(db).claimDue(16, 60_000)) {
 *   await send(n).then(() => outbox.delivered(n.id), (e) => outbox.attemptFailed(n.id, String(e), 5_000));
 * }
 */
export class NotificationOutbox {
  constructor(private readonly db: AskUserDatabase) {}

  /**
   * Writes `notifications`, due now; pass the event's own transaction as the database. A
   * notification whose event id and channel are there already is skipped.
   * @throws {AskUserError} `invalid_argument` for a malformed one (nothing written), `unavailable`.
   */
  async enqueue(notifications: readonly NewNotification[]): Promise<void> {
    const parsed = z.array(newNotificationSchema).safeParse(notifications);
    if (!parsed.success) {
      throw new AskUserError('invalid_argument', `a notification is malformed: ${parsed.error}`, {
        cause: parsed.error,
      });
    }
    if (parsed.data.length === 0) return;
    const rows = parsed.data.map(
      (n) =>
        sql`(${randomUUID()}, ${n.eventId}, ${n.kind}, ${n.channel}, ${JSON.stringify(n.payload ?? null)}::jsonb)`,
    );
    await this.#run(
      'enqueueing notifications',
      sql`insert into aura.notifications (id, event_id, kind, channel, payload)
        values ${sql.join(rows, sql`, `)} on conflict (event_id, channel) do nothing`,
    );
  }

  /**
   * Takes up to `limit` due notifications for one attempt each: counts the attempt and moves
   * them `leaseMs` ahead, so that a deliverer that dies mid-delivery leaves them due again
   * (a receiver may see an event twice, never none). Rows another claim holds are skipped.
   * @throws {AskUserError} `unavailable`.
   */
  async claimDue(limit: number, leaseMs: number): Promise<NotificationRecord[]> {
    const rows = await this.#run(
      'claiming notifications',
      sql`update aura.notifications n
        set attempts = n.attempts + 1, next_at = now() + ${leaseMs} * interval '1 millisecond'
        where n.id in (select id from aura.notifications
          where status = 'pending' and next_at <= now()
          order by next_at limit ${limit} for update skip locked)
        returning ${COLUMNS}`,
    );
    return rows.map(recordOf);
  }

  /** When the next pending notification is due, or undefined when none is pending. */
  async nextDue(): Promise<Date | undefined> {
    const [row] = await this.#run(
      'reading the next due notification',
      sql`select min(next_at) as at from aura.notifications where status = 'pending'`,
    );
    return row?.at == null ? undefined : asDate(row.at);
  }

  /** Records a delivery that the receiver accepted. */
  async delivered(id: string): Promise<void> {
    await this.#run(
      'recording a delivery',
      sql`update aura.notifications
        set status = 'delivered', delivered_at = now(), last_error = null where id = ${id}`,
    );
  }

  /**
   * Records a failed delivery and why: due again in `retryInMs` (the caller's backoff), or,
   * with `undefined`, failed for good (the dead letter, until {@link retry}).
   */
  async attemptFailed(id: string, error: string, retryInMs: number | undefined): Promise<void> {
    await this.#run(
      'recording a failed delivery',
      retryInMs === undefined
        ? sql`update aura.notifications set status = 'failed', last_error = ${error} where id = ${id}`
        : sql`update aura.notifications set last_error = ${error},
            next_at = now() + ${retryInMs} * interval '1 millisecond' where id = ${id}`,
    );
  }

  /** Notifications, newest first: of one status when given, a page at a time (`before`). */
  async list(options: ListNotificationsOptions = {}): Promise<NotificationRecord[]> {
    const where: SQL[] = [];
    if (options.status !== undefined) where.push(sql`status = ${options.status}`);
    if (options.before !== undefined) {
      where.push(sql`seq < (select seq from aura.notifications where id = ${options.before})`);
    }
    const rows = await this.#run(
      'listing notifications',
      sql`select ${COLUMNS} from aura.notifications
        ${where.length ? sql`where ${sql.join(where, sql` and `)}` : sql``}
        order by seq desc limit ${options.limit ?? 100}`,
    );
    return rows.map(recordOf);
  }

  /** The notification `id`, or undefined. */
  async get(id: string): Promise<NotificationRecord | undefined> {
    const [row] = await this.#run(
      'reading a notification',
      sql`select ${COLUMNS} from aura.notifications where id = ${id}`,
    );
    return row && recordOf(row);
  }

  /**
   * Makes a delivered or failed notification due now, its attempts counted from zero (the
   * same event id, so a receiver that had it sees a duplicate). Undefined when no such
   * notification is delivered or failed (unknown, or pending already: {@link get} tells).
   */
  async retry(id: string): Promise<NotificationRecord | undefined> {
    const [row] = await this.#run(
      'retrying a notification',
      sql`update aura.notifications set status = 'pending', attempts = 0, next_at = now()
        where id = ${id} and status <> 'pending' returning ${COLUMNS}`,
    );
    return row && recordOf(row);
  }

  async #run(doing: string, statement: SQL): Promise<Record<string, unknown>[]> {
    try {
      return rowsOf(await this.db.execute(statement));
    } catch (error) {
      throw wrapDatabaseError(error, doing);
    }
  }
}
