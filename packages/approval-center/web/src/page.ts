import { byId, h } from './dom.js';
import { state } from './state.js';

/** Below this width the queue and the detail take turns on the screen (see style.css). */
const narrow = window.matchMedia('(max-width: 720px)');

/** The elements of index.html the page fills and listens to. */
export const ui = {
  live: byId('live'),
  count: byId('pending-count'),
  tabPending: byId('tab-pending'),
  tabRecent: byId('tab-recent'),
  tabPolicies: byId('tab-policies'),
  pendingPanel: byId('pending-panel'),
  recentPanel: byId('recent-panel'),
  policiesPanel: byId('policies-panel'),
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

/** Tells the operator what happened (a live region: screen readers read it out). */
export function say(text: string): void {
  ui.toast.textContent = text;
}

/**
 * On a narrow screen, shows the list or the selected question's `detail` (from its top, the
 * focus on it, so a phone's keyboard does not pop up). True when it did show the detail so.
 */
export function showView(view: 'queue' | 'detail', detail?: HTMLElement): boolean {
  ui.main.dataset.view = view;
  if (view !== 'detail' || !detail || !narrow.matches) return false;
  window.scrollTo(0, 0);
  detail.focus();
  return true;
}

/** The narrow screen's way from a detail back to its list, the focus on the selected row. */
export function backButton() {
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
