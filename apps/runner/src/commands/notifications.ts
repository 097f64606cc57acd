import { parseArgs } from 'node:util';
import { usageError } from '../errors.js';
import {
  type NotificationRecord,
  type NotificationStatus,
  notificationView,
  retryNotification,
  NOTIFICATION_STATUSES as STATUSES,
} from '../storage/notifications.js';
import { plural } from '../terminal/output.js';
import { type Command, globalOptions, withStorage } from './command.js';

const USAGE =
  'notifications list [--status pending|delivered|failed] [--limit N] | notifications retry ID';

/** One line of `list`: the id, the event, where it stands and why it failed. */
function line(n: NotificationRecord): string {
  const tries = plural(n.attempts, 'attempt');
  const why = n.lastError ? `: ${n.lastError}` : '';
  const stands =
    n.status === 'delivered'
      ? `delivered ${n.deliveredAt?.toISOString()}`
      : n.status === 'failed'
        ? `failed after ${tries}${why}`
        : `pending, due ${n.nextAt.toISOString()}${n.attempts ? ` (${tries}${why})` : ''}`;
  return `${n.id}  ${n.kind} → ${n.channel}  ${stands}`;
}

/**
 * `runner notifications list | retry`: the outbox of notifications, what was sent, what
 * failed and why; `retry` makes one due again with its attempts counted from zero.
 */
export const notifications: Command = async (ctx, args) => {
  const { values, positionals } = parseArgs({
    args,
    options: { ...globalOptions, status: { type: 'string' }, limit: { type: 'string' } },
    allowPositionals: true,
  });
  const [action, id, ...extra] = positionals;
  if (action !== 'list' && action !== 'retry') throw usageError(`usage: runner ${USAGE}`);
  if (extra.length) throw usageError(`unexpected "${extra.join(' ')}"; usage: runner ${USAGE}`);
  const status = values.status as NotificationStatus | undefined;
  if (status !== undefined && !STATUSES.includes(status)) {
    throw usageError(`--status takes ${STATUSES.join(', ')}, not "${status}"`);
  }
  const limit = Number(values.limit ?? 100);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
    throw usageError('--limit takes a whole number from 1 to 10000');
  }
  if (action === 'retry' && (values.status || values.limit)) {
    throw usageError('--status and --limit are for notifications list');
  }
  return withStorage(ctx, async (storage) => {
    const store = storage.notifications();
    if (action === 'retry') {
      if (!id) throw usageError(`notifications retry needs an ID; usage: runner ${USAGE}`);
      const again = await retryNotification(store, id);
      ctx.out.record(
        { type: 'notification-retry', ...notificationView(again) },
        `${again.id} (${again.kind} → ${again.channel}) is due again: wake or serve sends it`,
      );
      return 0;
    }
    if (id) throw usageError('notifications list takes no ID');
    const all = await store.list({ ...(status ? { status } : {}), limit });
    for (const n of all) ctx.out.record({ type: 'notification', ...notificationView(n) }, line(n));
    ctx.out.note(all.length ? plural(all.length, 'notification') : 'no notifications');
    return 0;
  });
};
