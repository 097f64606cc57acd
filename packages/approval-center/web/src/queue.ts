import type { AnswerAction, PauseView } from '@x/approval-center/contract';
import { api } from './api-client.js';
import { renderDetail } from './detail.js';
import { h, replace } from './dom.js';
import { refresh } from './feed.js';
import { say, showView, ui } from './page.js';
import { renderRecent } from './recent.js';
import { kindLabel, pendingRow } from './rows.js';
import { ageOf, answeredHere, state, type Tab } from './state.js';

/** The pending questions the filters let through, in the server's order. */
export function visible(): PauseView[] {
  return state.pending.filter(
    (p) =>
      (!ui.conversation.value || p.conversationId === ui.conversation.value) &&
      (!ui.kind.value || p.kind === ui.kind.value),
  );
}

/** Draws the whole page from the state: filters, the pending list, both details. */
export function render(): void {
  // The list is rebuilt; keep the keyboard focus on the row it was on.
  const focused = (document.activeElement as HTMLElement | null)?.closest<HTMLElement>(
    '#pending-list li[data-token]',
  )?.dataset.token;
  renderFilters();
  const shown = visible();
  if (!shown.some((p) => p.token === state.selected)) state.selected = shown[0]?.token;
  for (const token of state.checked)
    if (!state.pending.some((p) => p.token === token)) state.checked.delete(token);
  ui.count.textContent = String(state.pending.length);
  ui.empty.hidden = shown.length > 0;
  replace(ui.list, ...shown.map(rowOf));
  if (focused) {
    ui.list
      .querySelector<HTMLElement>(`li[data-token="${CSS.escape(focused)}"] button.open`)
      ?.focus();
  }
  renderBatch();
  renderDetail();
  renderRecent();
}

function renderFilters(): void {
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

function rowOf(pause: PauseView) {
  return pendingRow(
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
  );
}

function renderBatch(): void {
  ui.batch.hidden = state.checked.size === 0;
  ui.batchCount.textContent = `${state.checked.size} selected`;
}

/** Selects a question, the focus on its row. */
export function select(token: string | undefined): void {
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

/** Checks or unchecks a question for the batch answer. */
export function toggleChecked(token: string): void {
  if (state.checked.has(token)) state.checked.delete(token);
  else state.checked.add(token);
  render();
}

/** Unchecks every question. */
export function clearChecked(): void {
  state.checked.clear();
  render();
}

/** Answers every checked question the same way, all or none; the answer is the batch box's text. */
export async function batch(action: AnswerAction): Promise<void> {
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

/** Shows the pending, the recent or the policies tab (on a narrow screen, its list). */
export function showTab(tab: Tab): void {
  state.tab = tab;
  ui.tabPending.setAttribute('aria-selected', String(tab === 'pending'));
  ui.tabRecent.setAttribute('aria-selected', String(tab === 'recent'));
  ui.tabPolicies.setAttribute('aria-selected', String(tab === 'policies'));
  ui.pendingPanel.hidden = tab !== 'pending';
  ui.recentPanel.hidden = tab !== 'recent';
  ui.policiesPanel.hidden = tab !== 'policies';
  showView('queue');
}
