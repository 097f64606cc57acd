import type { SessionResponse } from '@x/approval-center/contract';
import { ApiError, api } from './api-client.js';
import { byId } from './dom.js';

/**
 * Asks the server who this page is signed in as. Signed in: shows who (and, for a page
 * session, the sign-out button) and returns the session. Not: shows the sign-in form, which
 * signs in with a key and reloads the page, and returns undefined.
 */
export async function signedIn(): Promise<SessionResponse | undefined> {
  const session = await api.session().catch((e: unknown) => {
    byId('toast').textContent = `Could not reach the server: ${e instanceof Error ? e.message : e}`;
    return undefined;
  });
  if (!session) return undefined;
  if (session.signedIn) {
    showWho(session);
    return session;
  }
  document.body.dataset.signedIn = 'no';
  const form = byId<HTMLFormElement>('sign-in');
  const key = byId<HTMLInputElement>('sign-in-key');
  const error = byId('sign-in-error');
  form.hidden = false;
  byId('sign-in-oidc').hidden = !session.methods.includes('oidc');
  key.focus();
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.textContent = '';
    api.signIn(key.value.trim()).then(
      () => location.reload(),
      (e) => {
        error.textContent = e instanceof ApiError ? e.message : String(e);
      },
    );
  });
  return undefined;
}

const accessWords = { admin: 'admin', operator: 'operator', viewer: 'viewer (read only)' };

function showWho(session: SessionResponse): void {
  document.body.dataset.signedIn = 'yes';
  const who = byId('who');
  const access = session.access ? accessWords[session.access] : '';
  byId('who-name').textContent = `${session.name ?? 'local operator'} · ${access}`;
  who.hidden = false;
  // Only a page session signs out; the local operator and a Bearer key have none.
  const signOut = byId<HTMLButtonElement>('sign-out');
  signOut.hidden = session.csrfToken === null;
  signOut.addEventListener('click', () => {
    api.signOut().then(
      () => location.reload(),
      (e) => {
        byId('toast').textContent = `Could not sign out: ${e instanceof Error ? e.message : e}`;
      },
    );
  });
}
