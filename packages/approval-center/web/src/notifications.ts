import type { NotificationView } from '@x/approval-center/contract';
import { ApiError, api } from './api-client.js';
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
  byId('notifications-status').addEventListener('change', () => void loadNotifications());
  byId('notifications-older').addEventListener('click', () => void loadNotifications(older));
}

/** The `before` of the next older page, while there is one. */
let older: string | null = null;

/** Loads the newest page of the chosen status, or (`before`) the page after the rows shown. */
async function loadNotifications(before?: string | null): Promise<void> {
  const body = byId('notifications-list');
  const more = byId<HTMLButtonElement>('notifications-older');
  const status = byId<HTMLSelectElement>('notifications-status').value;
  const limit = Number(byId('notifications').dataset.pageSize) || 100;
  try {
    const page = await api.notifications({ status, limit, ...(before ? { before } : {}) });
    const rows = page.notifications.map(notificationRow);
    if (before) body.append(...rows);
    else
      replace(
        body,
        ...(rows.length > 0
          ? rows
          : [h('tr', {}, h('td', { colspan: 7, class: 'hint' }, 'No notifications here.'))]),
      );
    older = page.next;
    more.hidden = older === null;
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
