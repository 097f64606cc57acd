import { type Action, ApiError, api, type Pause, type Recent } from './api.js';
import { age, askedWhen, byId, h, replace } from './dom.js';
import { badge, labels, pendingRow, recentRow } from './views.js';

const state = {
  pending: [] as Pause[],
  recent: [] as Recent[],
  fetchedAt: Date.now(),
  selected: undefined as string | undefined,
  checked: new Set<string>(),
  tab: 'pending' as 'pending' | 'recent',
  detailFor: undefined as string | undefined,
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
  detail: byId('detail'),
  empty: byId('empty'),
  batch: byId<HTMLFormElement>('batch'),
  batchCount: byId('batch-count'),
  batchText: byId<HTMLInputElement>('batch-text'),
  toast: byId('toast'),
};

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

function fillSelect(select: HTMLSelectElement, values: string[], all: string): void {
  const current = select.value;
  replace(
    select,
    h('option', { value: '' }, all),
    ...values.map((v) => h('option', { value: v }, v)),
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
  fillSelect(ui.kind, [...new Set(state.pending.map((p) => p.kind))].sort(), 'all kinds');
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
          open: () => select(pause.token, true),
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
  replace(ui.recentList, ...state.recent.map(recentRow));
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
  const text = h('textarea', {
    id: 'answer-text',
    rows: 3,
    placeholder: pause.kind === 'approve' ? 'Note (optional)' : 'Your answer',
  });
  const act = async (action: Action, content: string) => {
    error.textContent = '';
    try {
      await api.answer(pause.token, action, content);
      say(
        `${action === 'accept' ? 'Answered' : action === 'decline' ? 'Declined' : 'Cancelled'}: ${pause.question}`,
      );
      state.pending = state.pending.filter((p) => p.token !== pause.token);
      state.selected = undefined;
      render();
      await refresh();
    } catch (e) {
      error.textContent = e instanceof ApiError ? e.message : String(e);
      if (e instanceof ApiError && e.status === 404) await refresh();
    }
  };
  const options = pause.options ?? [];
  const approve = pause.kind === 'approve' && options.length === 0;
  replace(
    ui.detail,
    h('h2', { class: 'question', id: 'detail-question' }, pause.question),
    h(
      'p',
      { class: 'meta' },
      badge(pause.priority),
      ...labels(pause),
      h('span', { class: 'age' }, askedWhen(ageOf(pause))),
    ),
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
    error,
  );
}

function select(token: string | undefined, focusDetail = false): void {
  state.selected = token;
  render();
  const row = ui.list.querySelector<HTMLElement>(`li.selected button.open`);
  if (focusDetail) ui.detail.querySelector<HTMLElement>('.option, textarea')?.focus();
  else row?.focus();
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
  const messages: Record<string, (e: { conversationId: string; outcome?: string }) => string> = {
    'pause-created': (e) => `New question in ${e.conversationId}`,
    'pause-answered': (e) => `Answered in ${e.conversationId}`,
    'run-resumed': (e) => `Run of ${e.conversationId} resumed${e.outcome ? ` (${e.outcome})` : ''}`,
    'run-completed': (e) => `Run of ${e.conversationId} completed`,
  };
  for (const [type, message] of Object.entries(messages)) {
    events.addEventListener(type, (event) => {
      say(message(JSON.parse((event as MessageEvent<string>).data)));
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
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (target.closest('input[type=text], textarea, select')) {
    if (event.key === 'Escape') target.blur();
    return;
  }
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
