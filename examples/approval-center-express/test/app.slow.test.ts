import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type FakeLlm, startFakeLlm, tripBooker } from '@internal/fake-llm';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { migrate, sqlExecutiveStorage } from '@x/executive';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicModel } from '../src/agent.js';
import { type App, createApp } from '../src/app.js';

// The app in headless Chromium: its own sign-in guards the approval center mounted under
// /approvals; a trip booked on the app's page waits for approval there; vic, a viewer, may not
// answer it; ada approves it on the center's page; the app's own page shows the run completed
// with what the agent said.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const chromiumFound = existsSync(CHROMIUM);
if (!chromiumFound && process.env.CI === 'true') {
  throw new Error(`CI=true but there is no Chromium at ${CHROMIUM}`);
}

for (const target of await sqlTargets()) {
  describe.skipIf(target.skip || !chromiumFound)(`on ${target.kind}`, { timeout: 90_000 }, () => {
    let fake: FakeLlm;
    let opened: SqlTarget;
    let app: App;
    let server: Server;
    let base: string;
    let profile: string;
    let context: BrowserContext;

    beforeAll(async () => {
      fake = await startFakeLlm(tripBooker);
      process.env.ANTHROPIC_BASE_URL = fake.url;
      process.env.ANTHROPIC_API_KEY = 'fake';
      opened = await target.open();
      await migrate(opened.db);
      const storage = sqlExecutiveStorage(opened.db, {
        queue: { synchronousClaim: target.kind === 'pglite' },
      });
      app = createApp({ storage, model: anthropicModel('fake') });
      server = app.app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      profile = mkdtempSync(path.join(tmpdir(), 'express-chromium-'));
      context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--no-first-run',
          '--disable-background-networking',
        ],
      });
    });
    afterAll(async () => {
      await context?.close();
      if (profile) rmSync(profile, { recursive: true, force: true });
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
      await app?.close();
      await opened?.close();
      await fake?.close();
    });

    it('signs in with the app, books a trip, a viewer may not answer, ada approves it on the page; the run completes', async () => {
      const page = context.pages()[0] ?? (await context.newPage());
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));

      // The center's API refuses whoever the app does not know; its page sends them to sign in.
      const api = await fetch(`${base}/approvals/api/pauses`);
      expect(api.status).toBe(401);
      await page.goto(`${base}/approvals/`);
      expect(new URL(page.url()).pathname).toBe('/login');
      await page.locator('#name').fill('ada');
      await page.locator('#sign-in').click();
      await page.waitForURL(`${base}/approvals/`);
      await page.locator('#who-name', { hasText: 'ada' }).waitFor();

      // The app's own page starts the agent; its run waits for the approval.
      const booking = await context.newPage();
      await booking.goto(base);
      await booking.locator('#request').fill('Book me a trip to Porto');
      await booking.locator('#book').click();
      await booking.waitForURL(/\/trips\/[\w-]+$/);
      await expect(booking.locator('#status').textContent()).resolves.toBe('waiting');

      // The question comes to the open page by its live feed.
      const row = page.locator('#pending-list li', { hasText: 'book_trip' });
      await row.waitFor();
      const token = await row.getAttribute('data-token');

      // vic, a viewer of the app, sees it but may not answer it, even with a sign-in's CSRF token.
      const vic = await fetch(`${base}/login`, {
        method: 'POST',
        body: new URLSearchParams({ name: 'vic' }),
        redirect: 'manual',
      });
      const cookie = (vic.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      const asVic = await fetch(`${base}/approvals/api/pauses`, { headers: { cookie } });
      const { pauses } = (await asVic.json()) as { pauses: Array<{ canAnswer: boolean }> };
      expect(pauses).toMatchObject([{ canAnswer: false, readOnly: 'viewer' }]);
      const session = await fetch(`${base}/approvals/api/session`, { headers: { cookie } });
      const { csrfToken } = (await session.json()) as { csrfToken: string };
      const refused = await fetch(`${base}/approvals/api/pauses/${token}/answer`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', 'x-csrf-token': csrfToken },
        body: JSON.stringify({ action: 'accept', content: '' }),
      });
      expect(refused.status).toBe(403);

      // ada approves the call.
      await row.locator('button.open').click();
      await expect(page.locator('#send').textContent()).resolves.toBe('Approve');
      await page.locator('#send').click();
      await row.waitFor({ state: 'detached' });

      // The app's worker resumed the run: booked once, and the agent said so.
      await expect
        .poll(
          async () => {
            await booking.reload();
            return booking.locator('#status').textContent();
          },
          { timeout: 30_000 },
        )
        .toBe('completed');
      await expect(booking.locator('#result').textContent()).resolves.toBe(
        'Your trip: booked Porto.',
      );
      expect(errors).toEqual([]);
    });
  });
}
