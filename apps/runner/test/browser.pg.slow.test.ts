import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { serverForTests } from '@internal/pg-test';
import { AskUserStore } from '@x/askuser';
import { drizzle } from 'drizzle-orm/postgres-js';
import type { Page } from 'playwright-core';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApprovalCenter,
  ARTIFACTS,
  hasChromium,
  startApprovalCenter,
} from './browser-harness.js';
import {
  call,
  exec,
  pendingOf as pendingAt,
  run,
  type Served,
  type Started,
  until,
} from './serve-harness.js';

const server = await serverForTests();
const chromiumFound = hasChromium();

// PostgreSQL, so that `runner serve`, `runner exec` and `runner wake` run as separate
// processes side by side, as an operator would run them (the embedded default allows one
// process at a time).
describe.skipIf(!server || !chromiumFound)('approval center in headless Chromium', () => {
  let center: ApprovalCenter;
  let database: ApprovalCenter['database'];
  let env: Record<string, string>;
  let served: Served;
  let waker: Started;
  let page: Page;
  let pageErrors: string[] = [];

  beforeAll(async () => {
    center = await startApprovalCenter(server as string);
    ({ database, env, served, waker } = center);
    page = center.browser.page;
    pageErrors = center.browser.errors;
  }, 300_000);

  afterAll(async () => {
    await center?.close();
  });

  const row = (token: string) => page.locator(`#pending-list li[data-token="${token}"]`);
  const pendingOf = (conversation: string, except: string[] = []) =>
    pendingAt(served.url, conversation, except);

  it('shows new questions live, answers with an option and a decline, and the runs complete', {
    timeout: 300_000,
  }, async () => {
    await page.goto(served.url);
    await page.locator('#live', { hasText: 'live' }).waitFor();
    await page.locator('#empty').waitFor({ state: 'visible' });

    // Two conversations start while the page is open: both questions appear without a reload.
    const [tokenA, tokenB] = await Promise.all([exec('trip-a', { env }), exec('trip-b', { env })]);
    await row(tokenA).waitFor();
    await row(tokenB).waitFor();
    await expect(row(tokenA).locator('.q').textContent()).resolves.toBe(
      'Where would you like to go?',
    );
    await expect(row(tokenA).locator('.badge').textContent()).resolves.toBe('high');
    await expect(row(tokenA).locator('.kind').textContent()).resolves.toBe('question');
    await expect(row(tokenA).locator('.conv').textContent()).resolves.toBe('trip-a');
    await expect(page.locator('#pending-count').textContent()).resolves.toBe('2');

    // A: choose an option in the detail pane.
    await row(tokenA).locator('button.open').click();
    await expect(page.locator('#detail-question').textContent()).resolves.toBe(
      'Where would you like to go?',
    );
    await page.locator('#detail .option', { hasText: 'Kyoto' }).click();
    await row(tokenA).waitFor({ state: 'detached' });
    // `runner wake` (another process) resumes it; its next question arrives live.
    const daysA = await until(() => pendingOf('trip-a'), 'the second question of trip-a');
    await row(daysA).waitFor();
    await expect(row(daysA).locator('.q').textContent()).resolves.toBe('How many days in Kyoto?');
    await row(daysA).locator('button.open').click();
    await page.locator('#answer-text').fill('4');
    await page.locator('#send').click();
    const approveA = await until(() => pendingOf('trip-a', [daysA]), 'the approval of trip-a');
    await row(approveA).waitFor();

    // B: answered from the command line (another process); the page follows along.
    expect((await run(['answer', tokenB, '--option', '1'], env)).code).toBe(0);
    await row(tokenB).waitFor({ state: 'detached' });
    const daysB = await until(() => pendingOf('trip-b'), 'the second question of trip-b');
    await row(daysB).waitFor();
    expect((await run(['answer', daysB, '--accept', '2'], env)).code).toBe(0);
    const approveB = await until(() => pendingOf('trip-b', [daysB]), 'the approval of trip-b');
    await row(approveB).waitFor();

    // A is approved, B is declined, with the keyboard: j/k to move, d to decline.
    await row(approveA).locator('button.open').click();
    await expect(page.locator('#send').textContent()).resolves.toBe('Approve');
    await page.locator('#send').click();
    await row(approveA).waitFor({ state: 'detached' });
    await row(approveB).locator('button.open').click();
    // Selecting a question puts the cursor in its answer box; Escape leaves it for the keys.
    await page.keyboard.press('Escape');
    await page.keyboard.press('d');
    await row(approveB).waitFor({ state: 'detached' });

    // The recent tab shows both runs completed by `runner wake`.
    await page.locator('#tab-recent').click();
    const recentRow = (token: string) => page.locator(`#recent-list li[data-token="${token}"]`);
    await recentRow(approveA).and(page.locator('[data-outcome="completed"]')).waitFor();
    await recentRow(approveB).and(page.locator('[data-outcome="completed"]')).waitFor();
    await expect(recentRow(approveB).locator('.answer').textContent()).resolves.toContain(
      'declined',
    );
    await expect(recentRow(tokenA).getAttribute('data-outcome')).resolves.toBe('waiting');
    await until(
      () => waker.stdout().split('"type":"run-completed"').length === 3,
      'runner wake to complete both runs',
    );
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({
      path: path.join(ARTIFACTS, 'approval-center-recent.png'),
      fullPage: true,
    });
    expect(pageErrors).toEqual([]);
  });

  it('renders question text, options and labels as text: markup runs nothing', {
    timeout: 120_000,
  }, async () => {
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    const evil = '<img src=x onerror="window.__xss=1">Pick <b>one</b>';
    try {
      await new AskUserStore(drizzle({ client: sql })).insert({
        token: 'xss-1',
        conversationId: '<script>window.__xss=2</script>',
        kind: 'ask_user',
        question: evil,
        options: ['<img src=y onerror="window.__xss=3">', '<b>plain</b>'],
        priority: 7,
        toolCallId: 'call_xss',
        proxiedFromChildId: '<i>w1</i>',
      });
      await new AskUserStore(drizzle({ client: sql })).insert({
        token: 'batch-2',
        conversationId: 'ops',
        kind: 'approve',
        question: 'Approve: restart the cache?',
        toolCallId: 'call_b2',
      });
    } finally {
      await sql.end();
    }
    await page.locator('#tab-pending').click();
    await row('xss-1').waitFor();
    await row('xss-1').locator('button.open').click();
    await expect(row('xss-1').locator('.q').textContent()).resolves.toBe(evil);
    await expect(row('xss-1').locator('.conv').textContent()).resolves.toBe(
      '<script>window.__xss=2</script>',
    );
    await expect(row('xss-1').locator('.via').textContent()).resolves.toBe('via <i>w1</i>');
    await expect(page.locator('#detail-question').textContent()).resolves.toBe(evil);
    await expect(page.locator('#detail .option').first().textContent()).resolves.toContain(
      '<img src=y',
    );
    await expect(row('xss-1').locator('.badge').getAttribute('class')).resolves.toContain('high');
    // No element was made from the text, and no handler ran.
    await expect(page.locator('main img, main b, main i, main script').count()).resolves.toBe(0);
    await expect(page.evaluate('window.__xss')).resolves.toBeUndefined();
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'approval-center.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({
      path: path.join(ARTIFACTS, 'approval-center-phone.png'),
      fullPage: true,
    });
    await expect(
      page.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1'),
    ).resolves.toBe(true);

    // Both at once: one ticked with the keyboard (x), one with its checkbox; one batch answer.
    await page.setViewportSize({ width: 1200, height: 800 });
    await row('batch-2').waitFor();
    await row('xss-1').locator('button.open').click();
    await page.keyboard.press('Escape');
    await page.keyboard.press('x');
    await row('batch-2').locator('input.check').check();
    await expect(page.locator('#batch-count').textContent()).resolves.toBe('2 selected');
    await page.locator('#batch-text').fill('not today');
    await page.locator('#batch-decline').click();
    await row('xss-1').waitFor({ state: 'detached' });
    await row('batch-2').waitFor({ state: 'detached' });
    await expect(page.locator('#batch').isHidden()).resolves.toBe(true);
    await page.locator('#tab-recent').click();
    await expect(
      page.locator('#recent-list li[data-token="batch-2"] .answer').textContent(),
    ).resolves.toBe('declined · not today');
    expect(pageErrors).toEqual([]);
  });
  it('signs in with a key; a viewer reads without an answer form; forged writes are refused; sign-out ends the session', {
    timeout: 300_000,
  }, async () => {
    // Operators added while the page is served: from now on it needs a sign-in.
    const keys: Record<string, string> = {};
    for (const [name, role] of [
      ['vic', 'viewer'],
      ['bob', 'operator'],
    ] as const) {
      const added = await run(['operators', 'add', name, '--role', role, '--json'], env);
      expect(added.code, added.stderr).toBe(0);
      keys[name] = added.events.find((e) => e.type === 'operator-added')?.key as string;
    }
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await new AskUserStore(drizzle({ client: sql })).insert({
        token: 'signin-1',
        conversationId: 'ops-signin',
        kind: 'ask_user',
        question: 'Which region for the new cache?',
        toolCallId: 'call_signin',
      });
    } finally {
      await sql.end();
    }
    const stillPending = async () =>
      (
        await call(new URL('/api/pauses', served.url).toString(), {
          headers: { authorization: `Bearer ${keys.bob}` },
        })
      ).body.pauses.some((p: { token: string }) => p.token === 'signin-1');
    const signIn = async (key: string) => {
      await page.locator('#sign-in-key').fill(key);
      await page.locator('#sign-in-submit').click();
    };
    // A write made by script in the page, as a forged one would be: status and message.
    const post = (headers: Record<string, string>) =>
      page.evaluate(async (headers) => {
        const response = await fetch('/api/pauses/signin-1/answer', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ action: 'accept', content: 'eu-west' }),
        });
        return {
          status: response.status,
          body: (await response.json()) as { error: { message: string } },
        };
      }, headers);
    const csrfToken = () =>
      page.evaluate(
        async () =>
          ((await (await fetch('/api/session')).json()) as { csrfToken: string }).csrfToken,
      );

    await page.goto(served.url);
    await page.locator('#sign-in').waitFor({ state: 'visible' });
    await expect(page.locator('#pending-panel').isVisible()).resolves.toBe(false);
    await signIn('runner_0000000000000000_not-a-key');
    await page
      .locator('#sign-in-error', { hasText: "not the server's token nor a live operator's key" })
      .waitFor();

    // The viewer: the question, read only, and no answer form.
    await signIn(keys.vic as string);
    await page.locator('#who-name', { hasText: 'vic · viewer (read only)' }).waitFor();
    await row('signin-1').locator('button.open').click();
    await page.locator('#read-only').waitFor();
    await expect(
      page.locator('#detail textarea, #detail #send, #detail #decline').count(),
    ).resolves.toBe(0);
    await expect(row('signin-1').locator('input.check').isDisabled()).resolves.toBe(true);
    // The session id is HttpOnly: no script of the page reads it.
    await expect(page.evaluate('document.cookie')).resolves.toBe('');
    const asViewer = await post({ 'x-csrf-token': await csrfToken() });
    expect(asViewer.status).toBe(403);
    expect(asViewer.body.error.message).toContain('vic is a viewer');
    expect(await stillPending()).toBe(true);

    // Sign-out ends the session on the server: its cookie is refused afterwards.
    const [vicCookie] = await center.browser.context.cookies(served.url);
    expect(vicCookie).toMatchObject({ name: 'runner_session', httpOnly: true, sameSite: 'Strict' });
    await page.locator('#sign-out').click();
    await page.locator('#sign-in').waitFor({ state: 'visible' });
    const replayed = await call(new URL('/api/pauses', served.url).toString(), {
      headers: { cookie: `runner_session=${vicCookie?.value}` },
    });
    expect(replayed.status).toBe(401);
    expect(replayed.body.error.message).toContain('your session has ended');

    // An operator: the answer form; a write without the CSRF token is refused.
    await signIn(keys.bob as string);
    await page.locator('#who-name', { hasText: 'bob · operator' }).waitFor();
    const noToken = await post({});
    expect(noToken.status).toBe(403);
    expect(noToken.body.error.message).toContain('must carry its CSRF token');
    // Another site's page (same site, another origin: the browser sends the cookie) posts
    // a form at the approval center: refused, nothing changed.
    const evil = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><form id="f" method="POST" enctype="text/plain"
        action="${new URL('/api/pauses/signin-1/answer', served.url)}">
        <input name='{"action":"accept","content":"x","a":"' value='"}'></form>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    try {
      const evilPage = await center.browser.context.newPage();
      await evilPage.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const [refused] = await Promise.all([
        evilPage.waitForResponse((r) => r.url().includes('/api/pauses/signin-1/answer')),
        evilPage.evaluate('document.getElementById("f").submit()'),
      ]);
      expect(refused.status()).toBe(403);
      expect(await refused.text()).toContain('CSRF token');
      await evilPage.close();
    } finally {
      evil.close();
    }
    expect(await stillPending()).toBe(true);

    // The page itself sends the token: bob answers.
    await row('signin-1').locator('button.open').click();
    await page.locator('#answer-text').fill('eu-west');
    await page.locator('#send').click();
    await row('signin-1').waitFor({ state: 'detached' });
    expect(await stillPending()).toBe(false);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'approval-center-signed-in.png') });
    // The refusals above logged their failed requests; nothing else went wrong.
    expect(pageErrors.filter((e) => !e.startsWith('Failed to load resource'))).toEqual([]);
  });
});
