import { type Action, ApiError, api, type Context, type Pause, type Recent } from './api.js';
import { contextSlot, sourcePart } from './context.js';
import { age, askedWhen, byId, h, replace } from './dom.js';
import {
  answerLine,
  kindLabel,
  labels,
  pendingRow,
  priorityBadge,
  recentRow,
  statusText,
} from './views.js';

/** Below this width the queue and the detail take turns on the screen (see style.css). */
const narrow = window.matchMedia('(max-width: 720px)');

const state = {
  pending: [] as Pause[],
  recent: [] as Recent[],
  fetchedAt: Date.now(),
  selected: undefined as string | undefined,
  checked: new Set<string>(),
  tab: 'pending' as 'pending' | 'recent',
  detailFor: undefined as string | undefined,
  recentSelected: undefined as string | undefined,
  recentDetailFor: undefined as string | undefined,
};

const ui = {
  live: byId('live'),
  count: byId('pending-count'),
  tabPending: byId('tab-pending'),
  tabRecent: byId('tab-recent'),
  pendingPanel: byId('pending-panel'),
  recentPanel: byId('recent-panel'),
  conversation: byId<HTMLSelectElement>('filter-conversation'),
  kind: byId<HTMLSelectElement>('filter-kind'),
  list: byId('pending-list'),
  recentList: byId('recent-list'),
  main: byId('main'),
  detail: byId('detail'),
  recentDetail: byId('recent-detail'),
  empty: byId('empty'),
  batch: byId<HTMLFormElement>('batch'),
  batchCount: byId('batch-count'),
  batchText: byId<HTMLInputElement>('batch-text'),
  toast: byId('toast'),
};

/** Questions answered from this page: the feed's echo of them is not announced again. */
const answeredHere = new Set<string>();

const ageOf = (pause: Pause) => pause.ageMs + (Date.now() - state.fetchedAt);

function visible(): Pause[] {
  return state.pending.filter(
    (p) =>
      (!ui.conversation.value || p.conversationId === ui.conversation.value) &&
      (!ui.kind.value || p.kind === ui.kind.value),
  );
}

function say(text: string): void {
  ui.toast.textContent = text;
}

function fillSelect(
  select: HTMLSelectElement,
  values: string[],
  all: string,
  name: (value: string) => string = (v) => v,
): void {
  const current = select.value;
  replace(
    select,
    h('option', { value: '' }, all),
    ...values.map((v) => h('option', { value: v }, name(v))),
  );
  select.value = values.includes(current) ? current : '';
}

function render(): void {
  // The list is rebuilt; keep the keyboard focus on the row it was on.
  const focused = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>(
    '#pending-list li[data-token]',
  )?.dataset.token;
  fillSelect(
    ui.conversation,
    [...new Set(state.pending.map((p) => p.conversationId))].sort(),
    'all conversations',
  );
  fillSelect(
    ui.kind,
    [...new Set(state.pending.map((p) => p.kind))].sort(),
    'all kinds',
    kindLabel,
  );
  const shown = visible();
  if (!shown.some((p) => p.token === state.selected)) state.selected = shown[0]?.token;
  for (const token of state.checked)
    if (!state.pending.some((p) => p.token === token)) state.checked.delete(token);
  ui.count.textContent = String(state.pending.length);
  ui.empty.hidden = shown.length > 0;
  replace(
    ui.list,
    ...shown.map((pause) =>
      pendingRow(
        pause,
        ageOf(pause),
        { selected: pause.token === state.selected, checked: state.checked.has(pause.token) },
        {
          open: () => open(pause.token),
          check: (checked) => {
            if (checked) state.checked.add(pause.token);
            else state.checked.delete(pause.token);
            renderBatch();
          },
        },
      ),
    ),
  );
  if (focused) {
    ui.list
      .querySelector<HTMLElement>(`li[data-token="${CSS.escape(focused)}"] button.open`)
      ?.focus();
  }
  renderBatch();
  renderDetail();
  renderRecent();
}

/**
 * On a narrow screen, shows the list or the selected question's `detail` (from its top, the
 * focus on it, so a phone's keyboard does not pop up). True when it did show the detail so.
 */
function showView(view: 'queue' | 'detail', detail?: HTMLElement): boolean {
  ui.main.dataset.view = view;
  if (view !== 'detail' || !detail || !narrow.matches) return false;
  window.scrollTo(0, 0);
  detail.focus();
  return true;
}

function backButton() {
  return h(
    'button',
    {
      type: 'button',
      class: 'back',
      onclick: () => {
        showView('queue');
        const list = state.tab === 'pending' ? ui.list : ui.recentList;
        list.querySelector<HTMLElement>('li.selected button.open')?.focus();
      },
    },
    '← Back to the list',
  );
}

function renderRecent(): void {
  if (!state.recent.some((r) => r.token === state.recentSelected)) state.recentSelected = undefined;
  replace(
    ui.recentList,
    ...state.recent.map((record) =>
      recentRow(record, record.token === state.recentSelected, () => openRecent(record.token)),
    ),
  );
  const record = state.recent.find((r) => r.token === state.recentSelected);
  // Rebuilt when what it shows changed, so an open message list stays open meanwhile.
  const key = record && `${record.token}|${record.status}|${record.outcome}|${record.run?.status}`;
  if (key === state.recentDetailFor) return;
  state.recentDetailFor = key;
  if (!record) {
    replace(
      ui.recentDetail,
      h('p', { class: 'hint' }, 'Select a question to see what became of it.'),
    );
    return;
  }
  replace(
    ui.recentDetail,
    backButton(),
    h('h2', { class: 'question', id: 'recent-question' }, record.question),
    h('p', { class: 'meta' }, priorityBadge(record), ...labels(record)),
    sourcePart(record),
    h('p', { class: `status ${record.status}` }, statusText(record)),
    h('p', { class: 'answered' }, ...(answerLine(record) ?? ['no answer yet'])),
    contextSlot(record.token),
  );
}

function openRecent(token: string): void {
  state.recentSelected = token;
  renderRecent();
  showView('detail', ui.recentDetail);
}

function renderBatch(): void {
  ui.batch.hidden = state.checked.size === 0;
  ui.batchCount.textContent = `${state.checked.size} selected`;
}

function renderDetail(): void {
  const pause = state.pending.find((p) => p.token === state.selected);
  // Keep what the operator is typing: rebuild only when another question is shown.
  if (pause?.token === state.detailFor && pause) return;
  state.detailFor = pause?.token;
  if (!pause) {
    replace(ui.detail, h('p', { class: 'hint' }, 'Select a question to answer it.'));
    return;
  }
  const error = h('p', { class: 'error', role: 'alert' });
  const options = pause.options ?? [];
  const approve = pause.kind === 'approve' && options.length === 0;
  const text = h('textarea', {
    id: 'answer-text',
    rows: 3,
    placeholder: approve ? 'Note (optional)' : 'Your answer',
  });
  const act = async (action: Action, content: string) => {
    error.textContent = '';
    try {
      answeredHere.add(pause.token);
      await api.answer(pause.token, action, content);
      const done = {
        accept: approve ? 'Approved' : 'Answered',
        decline: 'Declined',
        cancel: 'Cancelled',
      };
      say(`${done[action]} “${pause.question}” in ${pause.conversationId}`);
      state.pending = state.pending.filter((p) => p.token !== pause.token);
      state.selected = undefined;
      render();
      // The next question, ready for the keyboard; on a phone, back to the queue.
      showView('queue');
      ui.list.querySelector<HTMLElement>('li.selected button.open')?.focus();
      await refresh();
    } catch (e) {
      error.textContent = e instanceof ApiError ? e.message : String(e);
      if (e instanceof ApiError && (e.status === 404 || e.status === 409)) await refresh();
    }
  };
  // Approve with changes: the edited action is the accepted content the model reads.
  const changes = h('textarea', { id: 'changes-text', rows: 3 });
  changes.value = pause.question.replace(/^Approve: /, '').replace(/\?( \(.*\))?$/s, '');
  const changesBox = h(
    'div',
    { class: 'changes', hidden: true },
    h(
      'label',
      { for: 'changes-text' },
      'Approve with these changes (the model reads them as what you approved)',
    ),
    changes,
    h(
      'button',
      {
        type: 'button',
        class: 'primary',
        id: 'send-changes',
        onclick: () => {
          const edited = changes.value.trim();
          if (!edited) {
            error.textContent = 'Write the approved action first.';
            changes.focus();
            return;
          }
          void act('accept', `approved with changes: ${edited}`);
        },
      },
      'Approve with these changes',
    ),
  );
  const proposal = (context: Context) => {
    const action = (context.toolCall?.input as { action?: unknown } | null)?.action;
    if (typeof action === 'string' && document.activeElement !== changes) changes.value = action;
  };
  replace(
    ui.detail,
    backButton(),
    h('h2', { class: 'question', id: 'detail-question' }, pause.question),
    h(
      'p',
      { class: 'meta' },
      priorityBadge(pause),
      ...labels(pause),
      h('span', { class: 'age' }, askedWhen(ageOf(pause))),
    ),
    sourcePart(pause),
    contextSlot(pause.token, approve ? proposal : undefined),
    options.length
      ? h(
          'div',
          { class: 'options', role: 'group', 'aria-label': 'Options' },
          ...options.map((option, i) =>
            h(
              'button',
              {
                type: 'button',
                class: 'option',
                'data-option': i + 1,
                onclick: () => act('accept', option),
              },
              h('kbd', {}, String(i + 1)),
              ' ',
              option,
            ),
          ),
        )
      : null,
    h(
      'label',
      { class: 'answer-label', for: 'answer-text' },
      options.length ? 'Or answer in your own words' : 'Answer',
    ),
    text,
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          class: 'primary',
          id: 'send',
          onclick: () => {
            const content = text.value.trim() || (approve ? 'approved' : '');
            if (!content) {
              error.textContent = 'Type an answer first (or choose an option).';
              text.focus();
              return;
            }
            void act('accept', content);
          },
        },
        approve ? 'Approve' : 'Send answer',
      ),
      approve
        ? h(
            'button',
            {
              type: 'button',
              id: 'approve-edit',
              'aria-expanded': 'false',
              'aria-controls': 'changes-text',
              onclick: (event) => {
                changesBox.hidden = false;
                (event.currentTarget as HTMLElement).setAttribute('aria-expanded', 'true');
                changes.focus();
              },
            },
            'Approve with changes',
          )
        : null,
      h(
        'button',
        { type: 'button', id: 'decline', onclick: () => act('decline', text.value.trim()) },
        'Decline',
      ),
      h(
        'button',
        {
          type: 'button',
          id: 'cancel',
          title: 'End the run without resuming it',
          onclick: () => act('cancel', ''),
        },
        'Cancel run',
      ),
      h(
        'button',
        {
          type: 'button',
          id: 'stop',
          class: 'danger',
          onclick: async () => {
            if (
              !confirm(`Stop conversation ${pause.conversationId}? Its open questions are closed.`)
            )
              return;
            try {
              const { pauses } = await api.stop(pause.conversationId);
              say(`Stopped ${pause.conversationId}: ${pauses} question(s) closed`);
              await refresh();
            } catch (e) {
              error.textContent = e instanceof Error ? e.message : String(e);
            }
          },
        },
        'Stop conversation',
      ),
    ),
    approve ? changesBox : null,
    error,
  );
}

function select(token: string | undefined): void {
  state.selected = token;
  render();
  ui.list.querySelector<HTMLElement>(`li.selected button.open`)?.focus();
}

/** Opens a question: its detail, with the cursor where the answer goes. */
function open(token: string): void {
  state.selected = token;
  render();
  if (!showView('detail', ui.detail))
    ui.detail.querySelector<HTMLElement>('.option, textarea')?.focus();
}

async function batch(action: Action): Promise<void> {
  const tokens = [...state.checked];
  const content = ui.batchText.value.trim();
  if (action === 'accept' && !content) {
    say('Type the answer for all selected questions first.');
    ui.batchText.focus();
    return;
  }
  try {
    for (const token of tokens) answeredHere.add(token);
    const { answered } = await api.answerBatch(tokens, action, content);
    say(`${answered} question(s) answered (${action})`);
    state.checked.clear();
    ui.batchText.value = '';
  } catch (e) {
    say(`Batch not applied, nothing was answered: ${e instanceof Error ? e.message : String(e)}`);
  }
  await refresh();
}

function showTab(tab: 'pending' | 'recent'): void {
  state.tab = tab;
  ui.tabPending.setAttribute('aria-selected', String(tab === 'pending'));
  ui.tabRecent.setAttribute('aria-selected', String(tab === 'recent'));
  ui.pendingPanel.hidden = tab !== 'pending';
  ui.recentPanel.hidden = tab !== 'recent';
  showView('queue');
}

let refreshing: Promise<void> | undefined;
let again = false;
async function refresh(): Promise<void> {
  if (refreshing) {
    again = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      again = false;
      try {
        const [pending, recent] = await Promise.all([api.pending(), api.recent()]);
        state.pending = pending;
        state.recent = recent;
        state.fetchedAt = Date.now();
        render();
      } catch (e) {
        say(`Could not load: ${e instanceof Error ? e.message : String(e)}`);
      }
    } while (again);
  })();
  try {
    await refreshing;
  } finally {
    refreshing = undefined;
  }
}

function connect(): void {
  const events = new EventSource('/api/events');
  events.addEventListener('ready', () => {
    ui.live.textContent = 'live';
    ui.live.className = 'live on';
    void refresh();
  });
  type FeedEvent = { token?: string; conversationId: string; outcome?: string };
  const messages: Record<string, (e: FeedEvent) => string> = {
    'pause-created': (e) => `New question in ${e.conversationId}`,
    'pause-answered': (e) => `Answered in ${e.conversationId}`,
    'run-resumed': (e) => `Run of ${e.conversationId} resumed${e.outcome ? ` (${e.outcome})` : ''}`,
    'run-completed': (e) => `Run of ${e.conversationId} completed`,
  };
  for (const [type, message] of Object.entries(messages)) {
    events.addEventListener(type, (event) => {
      const data = JSON.parse((event as MessageEvent<string>).data) as FeedEvent;
      // This page already said what it answered, naming the question.
      const ours = type === 'pause-answered' && answeredHere.has(data.token ?? '');
      if (!ours) say(message(data));
      void refresh();
    });
  }
  events.onerror = () => {
    ui.live.textContent = 'reconnecting…';
    ui.live.className = 'live off';
  };
}

function onKey(event: KeyboardEvent): void {
  const target = event.target as HTMLElement;
  if (target.closest('input[type=text], textarea, select')) {
    if (event.key === 'Escape') target.blur();
    else if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && target.id) {
      const send = { 'answer-text': 'send', 'changes-text': 'send-changes' }[target.id];
      if (send) {
        event.preventDefault();
        byId(send).click();
      }
    }
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (state.tab === 'recent' && event.key !== 'r') return;
  const shown = visible();
  const index = shown.findIndex((p) => p.token === state.selected);
  const pause = shown[index];
  if (event.key === 'j' || event.key === 'ArrowDown')
    select(shown[Math.min(shown.length - 1, index + 1)]?.token);
  else if (event.key === 'k' || event.key === 'ArrowUp')
    select(shown[Math.max(0, index - 1)]?.token);
  else if (event.key === 'r') showTab(state.tab === 'pending' ? 'recent' : 'pending');
  else if (event.key === 'a') ui.detail.querySelector<HTMLElement>('textarea')?.focus();
  else if (event.key === 'd') ui.detail.querySelector<HTMLElement>('#decline')?.click();
  else if (event.key === 'e') ui.detail.querySelector<HTMLElement>('#approve-edit')?.click();
  else if (event.key === 'x' && pause) {
    if (state.checked.has(pause.token)) state.checked.delete(pause.token);
    else state.checked.add(pause.token);
    render();
  } else if (/^[1-9]$/.test(event.key)) {
    ui.detail.querySelector<HTMLElement>(`.option[data-option="${event.key}"]`)?.click();
  } else return;
  event.preventDefault();
}

ui.tabPending.addEventListener('click', () => showTab('pending'));
ui.tabRecent.addEventListener('click', () => showTab('recent'));
ui.conversation.addEventListener('change', render);
ui.kind.addEventListener('change', render);
ui.batch.addEventListener('submit', (event) => {
  event.preventDefault();
  void batch('accept');
});
byId('batch-decline').addEventListener('click', () => batch('decline'));
byId('batch-cancel').addEventListener('click', () => batch('cancel'));
byId('batch-clear').addEventListener('click', () => {
  state.checked.clear();
  render();
});
document.addEventListener('keydown', onKey);
// Ages move on without asking the server.
setInterval(() => {
  for (const row of ui.list.querySelectorAll<HTMLElement>('li[data-token]')) {
    const pause = state.pending.find((p) => p.token === row.dataset.token);
    const cell = row.querySelector('.age');
    if (pause && cell) cell.textContent = age(ageOf(pause));
  }
}, 15_000);

connect();
void refresh();
