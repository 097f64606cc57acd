import type { RecentView } from '@x/approval-center/contract';
import { contextSlot } from './context-section.js';
import { h, replace } from './dom.js';
import { backButton, showView, ui } from './page.js';
import {
  answerLine,
  labels,
  priorityBadge,
  recentRow,
  sourcePart,
  statusText,
  titleOf,
} from './rows.js';
import { state } from './state.js';

/** Shows the recent list and the selected record's detail. */
export function renderRecent(): void {
  if (!state.recent.some((r) => r.token === state.recentSelected)) state.recentSelected = undefined;
  replace(
    ui.recentList,
    ...state.recent.map((record) =>
      recentRow(record, record.token === state.recentSelected, () => openRecent(record.token)),
    ),
  );
  const record = state.recent.find((r) => r.token === state.recentSelected);
  // No bordered box stands empty beside the list until a question is selected.
  ui.recentDetail.hidden = !record;
  // Rebuilt when what it shows changed, so an open message list stays open meanwhile.
  const key = record && `${record.token}|${record.status}|${record.outcome}|${record.run?.status}`;
  if (key === state.recentDetailFor) return;
  state.recentDetailFor = key;
  if (!record) {
    replace(ui.recentDetail);
    return;
  }
  replace(ui.recentDetail, ...recentDetailOf(record));
}

function recentDetailOf(record: RecentView) {
  return [
    backButton(),
    h('h2', { class: 'question', id: 'recent-question' }, titleOf(record)),
    h('p', { class: 'meta' }, priorityBadge(record), ...labels(record)),
    sourcePart(record),
    h('p', { class: `status ${record.status}` }, statusText(record)),
    h('p', { class: 'answered' }, ...(answerLine(record) ?? ['no answer yet'])),
    contextSlot(record.token),
  ];
}

function openRecent(token: string): void {
  state.recentSelected = token;
  renderRecent();
  showView('detail', ui.recentDetail);
}
