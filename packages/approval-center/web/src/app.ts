// The page's entry (index.html loads /app.js): wires the elements to the modules and starts.
import { age, byId } from './dom.js';
import { connect, refresh } from './feed.js';
import { showNotifications } from './notifications.js';
import { ui } from './page.js';
import { offerPolicies } from './policies.js';
import { batch, clearChecked, render, showTab } from './queue.js';
import { timeLeft, waitPart } from './rows.js';
import { onKey } from './shortcuts.js';
import { signedIn } from './sign-in.js';
import { ageOf, msLeftOf, onChange, state } from './state.js';

onChange(render);
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
byId('batch-clear').addEventListener('click', clearChecked);
document.addEventListener('keydown', onKey);
// Ages, time left and the wait's times move on without asking the server.
setInterval(() => {
  for (const row of ui.list.querySelectorAll<HTMLElement>('li[data-token]')) {
    const pause = state.pending.find((p) => p.token === row.dataset.token);
    const cell = row.querySelector('.age');
    if (pause && cell) cell.textContent = age(ageOf(pause));
    const left = row.querySelector('.left');
    if (pause?.deadline && left) left.textContent = timeLeft(msLeftOf(pause.deadline));
  }
  const shown = state.pending.find((p) => p.token === state.detailFor);
  const wait = shown && waitPart(shown);
  if (wait) ui.detail.querySelector('#wait')?.replaceWith(wait);
}, 15_000);

// The lists and the feed once signed in (and the outbox for admins); else the sign-in form.
const session = await signedIn();
if (session) {
  state.access = session.access;
  connect();
  void refresh();
  if (session.access === 'admin') showNotifications();
  void offerPolicies();
}
