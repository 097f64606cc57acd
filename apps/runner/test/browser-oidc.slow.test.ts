import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, type Browser, hasChromium, launchBrowser } from './browser-harness.js';
import { type ProvidedServe, serveWithProvider } from './oidc-provider.js';
import { call, dataDirs, exec } from './serve-harness.js';

// The page signs in through a real OpenID provider in headless Chromium: the authorization
// code flow with PKCE, through the provider's login and consent pages; an operator outside a
// question's audience reads it without an answer form, and a forged answer of theirs is
// refused; sign-out ends the session; a failed callback lands on a page that says why. On the
// embedded default (one serve process), the questions asked before it starts.

const chromiumFound = hasChromium();
const newDataDir = dataDirs();

describe.skipIf(!chromiumFound)(
  'signing in with OIDC in headless Chromium',
  {
    timeout: 120_000,
  },
  () => {
    let provided: ProvidedServe | undefined;
    let browser: Browser | undefined;
    let payment = '';
    let trip = '';

    beforeAll(async () => {
      const data = newDataDir();
      payment = await exec('pay-oidc', { data, env: { RUNNER_AUDIENCE: 'ask_user=finance' } });
      trip = await exec('trip-oidc', { data });
      provided = await serveWithProvider({
        provider: {
          pages: true,
          users: [{ name: 'bob', groups: ['approvers'] }],
        },
        args: ['--data', data],
        env: { RUNNER_OIDC_ROLE_MAP: 'approvers=operator,finance=finance' },
      });
      browser = await launchBrowser();
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await provided?.close();
    });

    it("signs in through the provider's login and consent pages; outside the audience read only; sign-out ends the session", async () => {
      const { page, context, errors } = browser as Browser;
      const url = provided?.server.url as string;
      const row = (token: string) => page.locator(`#pending-list li[data-token="${token}"]`);

      await page.goto(url);
      await page.locator('#sign-in').waitFor({ state: 'visible' });
      await page.locator('#sign-in-oidc a').click();
      // The provider's own pages: who signs in, then what the page may have.
      await page.locator('#login-name').fill('bob');
      await page.locator('#login-submit').click();
      await expect(page.locator('#consent-scopes').textContent()).resolves.toBe(
        'openid profile groups',
      );
      await page.locator('#consent-allow').click();
      // Back at the approval center, signed in as the provider says.
      await page.locator('#who-name', { hasText: 'bob · operator' }).waitFor();
      expect(page.url()).toBe(url);
      const [session] = (await context.cookies(url)).filter((c) => c.name === 'runner_session');
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });

      // The payment needs finance: bob sees it, read only; the trip he may answer.
      await row(payment).locator('button.open').click();
      await page.locator('#read-only').waitFor();
      await expect(page.locator('#detail textarea, #detail #send').count()).resolves.toBe(0);
      await expect(row(payment).locator('input.check').isDisabled()).resolves.toBe(true);
      // Nor does the keyboard tick it for a batch answer.
      await page.keyboard.press('x');
      await expect(page.locator('#batch').isHidden()).resolves.toBe(true);
      await row(trip).locator('button.open').click();
      await page.locator('#answer-text').waitFor();

      // A forged answer to the payment, with the session's own CSRF token: the store refuses it.
      const forged = await page.evaluate(async (token) => {
        const { csrfToken } = (await (await fetch('/api/session')).json()) as { csrfToken: string };
        const response = await fetch(`/api/pauses/${token}/answer`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
          body: JSON.stringify({ action: 'accept', content: 'pay it' }),
        });
        return {
          status: response.status,
          body: (await response.json()) as { error: { code: string } },
        };
      }, payment);
      expect(forged.status).toBe(403);
      expect(forged.body.error.code).toBe('forbidden');
      await expect(row(payment).isVisible()).resolves.toBe(true);

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'approval-center-oidc.png') });
      await page.locator('#sign-out').click();
      await page.locator('#sign-in').waitFor({ state: 'visible' });
      const replayed = await call(new URL('/api/pauses', url).toString(), {
        headers: { cookie: `runner_session=${session?.value}` },
      });
      expect(replayed.status).toBe(401);
      expect(replayed.body.error.message).toContain('your session has ended');
      // The refused answer logged its failed request; nothing else went wrong.
      expect(errors.filter((e) => !e.startsWith('Failed to load resource'))).toEqual([]);
    });

    it('a callback that fails lands on a page that says why, with a way to try again', async () => {
      const { page } = browser as Browser;
      const url = provided?.server.url as string;
      const response = await page.goto(
        new URL('/auth/oidc/callback?state=forged&code=x', url).href,
      );
      expect(response?.status()).toBe(401);
      await expect(page.locator('h1').textContent()).resolves.toBe('Sign-in failed');
      await expect(page.locator('#sign-in-error').textContent()).resolves.toContain(
        'not begun in this browser',
      );
      // Trying again signs in at once: the provider remembers bob and his consent.
      await page.locator('a', { hasText: 'Try again' }).click();
      await page.locator('#who-name', { hasText: 'bob · operator' }).waitFor();
    });
  },
);
