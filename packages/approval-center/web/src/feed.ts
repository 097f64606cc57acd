import type { ServeEvent } from '@x/approval-center/contract';
import { api } from './api-client.js';
import { say, ui } from './page.js';
import { answeredHere, changed, state } from './state.js';

let refreshing: Promise<void> | undefined;
let again = false;

/**
 * Fetches both lists and redraws. A call while one is under way waits for it and makes it
 * fetch once more, so the last change the feed reported is always in what the page shows.
 */
export async function refresh(): Promise<void> {
  if (refreshing) {
    again = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      again = false;
      await load();
    } while (again);
  })();
  try {
    await refreshing;
  } finally {
    refreshing = undefined;
  }
}

async function load(): Promise<void> {
  try {
    const [pending, recent] = await Promise.all([api.pending(), api.recent()]);
    state.pending = pending;
    state.recent = recent;
    state.fetchedAt = Date.now();
    changed();
  } catch (e) {
    say(`Could not load: ${e instanceof Error ? e.message : String(e)}`);
  }
}

type Announcements = {
  [T in ServeEvent['type']]: (event: Extract<ServeEvent, { type: T }>) => string;
};

/** What the page says for each event of the feed. */
const announcements: Announcements = {
  'pause-created': (e) => `New question in ${e.conversationId}`,
  'pause-answered': (e) => `Answered in ${e.conversationId}`,
  'run-resumed': (e) => `Run of ${e.conversationId} resumed${e.outcome ? ` (${e.outcome})` : ''}`,
  'run-completed': (e) => `Run of ${e.conversationId} completed`,
  'approval-recorded': (e) =>
    `Approval recorded in ${e.conversationId}: ${e.approvals} of ${e.needed} approvals`,
  'question-reminded': (e) => `Reminder: a question of ${e.conversationId} still waits`,
  'question-escalated': (e) =>
    `Escalated a question of ${e.conversationId} to ${[...e.roles, ...e.names.map((n) => `@${n}`)].join(', ')}`,
};

function announce(event: ServeEvent): void {
  // This page already said what it answered, naming the question.
  if (event.type === 'pause-answered' && answeredHere.has(event.token)) return;
  say((announcements[event.type] as (event: ServeEvent) => string)(event));
}

/** Follows the server's feed: each event is announced and refreshes the lists. */
export function connect(): void {
  const events = new EventSource('api/events');
  events.addEventListener('ready', () => {
    ui.live.textContent = 'live';
    ui.live.className = 'live on';
    void refresh();
  });
  for (const type of Object.keys(announcements)) {
    events.addEventListener(type, (message) => {
      announce(JSON.parse((message as MessageEvent<string>).data) as ServeEvent);
      void refresh();
    });
  }
  // The key or session that opened the feed stopped signing in (revoked, rotated, signed
  // out, expired): the server ended the feed, and the page asks for a sign-in again.
  events.addEventListener('signed-out', () => {
    events.close();
    location.reload();
  });
  events.onerror = () => {
    ui.live.textContent = 'reconnecting…';
    ui.live.className = 'live off';
  };
}
