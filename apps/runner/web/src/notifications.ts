import { ApiError, api } from './api-client.js';
import type { NotificationView } from './api-types.d.ts';
import { byId, h, replace } from './dom.js';
import { say } from './page.js';

/**
 * The admins' view of the notification outbox: what was sent, what failed and why, and a
 * Retry for the dead letter. Shown only to admins (the API refuses anyone else anyway).
 */
export function showNotifications(): void {
  const panel = byId<HTMLDetailsElement>('notifications');
  panel.hidden = false;
  panel.addEventListener('toggle', () => {
    if (panel.open) void loadNotifications();
  });
  byId('notifications-refresh').addEventListener('click', () => void loadNotifications());
}

async function loadNotifications(): Promise<void> {
  const body = byId('notifications-list');
  try {
    const found = await api.notifications();
    replace(
      body,
      ...(found.length > 0
        ? found.map(notificationRow)
        : [h('tr', {}, h('td', { colspan: 7, class: 'hint' }, 'No notifications yet.'))]),
    );
  } catch (e) {
    say(`Could not load the notifications: ${e instanceof Error ? e.message : e}`);
  }
}

function notificationRow(n: NotificationView) {
  return h(
    'tr',
    { 'data-id': n.id, 'data-status': n.status },
    h('td', {}, h('time', { datetime: n.createdAt }, new Date(n.createdAt).toLocaleString())),
    h('td', {}, n.kind),
    h('td', {}, n.channel),
    h('td', { class: `status ${n.status}` }, n.status),
    h('td', {}, n.attempts),
    h('td', { class: 'last-error' }, n.lastError ?? ''),
    h(
      'td',
      {},
      n.status === 'failed' &&
        h(
          'button',
          {
            type: 'button',
            class: 'retry',
            'aria-label': `Retry ${n.kind} to ${n.channel}`,
            onclick: () => void retry(n),
          },
          'Retry',
        ),
    ),
  );
}

async function retry(n: NotificationView): Promise<void> {
  try {
    await api.retryNotification(n.id);
    say(`${n.kind} to ${n.channel} is due again.`);
  } catch (e) {
    say(`Could not retry: ${e instanceof ApiError ? e.message : String(e)}`);
  }
  await loadNotifications();
}
