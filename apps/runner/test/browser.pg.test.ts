import { mkdirSync } from 'node:fs';
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
});
