import { byId } from './dom.js';
import { ui } from './page.js';
import { select, showTab, toggleChecked, visible } from './queue.js';
import { state } from './state.js';

/** The page's keys (the footer of index.html lists them). */
export function onKey(event: KeyboardEvent): void {
  const target = event.target as HTMLElement;
  if (target.closest('input[type=text], textarea, select')) {
    onTextKey(event, target);
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (state.tab !== 'pending' && event.key !== 'r') return;
  if (onListKey(event.key)) event.preventDefault();
}

// In a text box the letters are text: only Escape leaves it and Ctrl+Enter sends.
function onTextKey(event: KeyboardEvent, target: HTMLElement): void {
  if (event.key === 'Escape') target.blur();
  else if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && target.id) {
    const send = {
      'answer-text': 'send',
      'changes-text': 'send-changes',
      'arguments-text': 'send-arguments',
    }[target.id];
    if (send) {
      event.preventDefault();
      byId(send).click();
    }
  }
}

/** Acts on a key outside a text box; false when the key means nothing here. */
function onListKey(key: string): boolean {
  const shown = visible();
  const index = shown.findIndex((p) => p.token === state.selected);
  const pause = shown[index];
  if (key === 'j' || key === 'ArrowDown')
    select(shown[Math.min(shown.length - 1, index + 1)]?.token);
  else if (key === 'k' || key === 'ArrowUp') select(shown[Math.max(0, index - 1)]?.token);
  else if (key === 'r') showTab(state.tab === 'pending' ? 'recent' : 'pending');
  else if (key === 'a') ui.detail.querySelector<HTMLElement>('textarea')?.focus();
  else if (key === 'd') ui.detail.querySelector<HTMLElement>('#decline')?.click();
  else if (key === 'e') ui.detail.querySelector<HTMLElement>('#approve-edit')?.click();
  // A question the caller may only read is never ticked for a batch answer (nor by its box).
  else if (key === 'x' && pause?.canAnswer) toggleChecked(pause.token);
  else if (/^[1-9]$/.test(key))
    ui.detail.querySelector<HTMLElement>(`.option[data-option="${key}"]`)?.click();
  else return false;
  return true;
}
