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
  type Browser,
  hasChromium,
  seriousAxeFindings,
  startApprovalCenter,
} from './browser-harness.js';
import { exec, pendingOf as pendingAt, run, until, workerPause } from './serve-harness.js';

const server = await serverForTests();
const chromiumFound = hasChromium();

// The approval center as an operator meets it: context beside each question, approving with
// changes, the keyboard alone, a phone, and axe-core's accessibility rules.
describe.skipIf(!server || !chromiumFound)('approval center: context, keyboard, phone, axe', () => {
  let center: ApprovalCenter;
  let env: Record<string, string>;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    center = await startApprovalCenter(server as string);
    ({ env, browser } = center);
    page = browser.page;
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 300_000);

  afterAll(async () => {
    await center?.close();
  });

  const shot = (name: string) =>
    page.screenshot({ path: path.join(ARTIFACTS, `approval-center-${name}.png`) });
  const row = (token: string) => page.locator(`#pending-list li[data-token="${token}"]`);
  const pendingOf = (conversation: string, except: string[] = []) =>
    pendingAt(center.served.url, conversation, except);
  const focusedToken = () =>
    page.evaluate<string | undefined>(
      "document.activeElement?.closest('li[data-token]')?.dataset.token",
    );
  /** Moves the selection with j until `token`'s row has the keyboard focus. */
  const keyTo = async (token: string) => {
    await page.keyboard.press('k');
    for (let i = 0; i < 20 && (await focusedToken()) !== token; i++) {
      await page.keyboard.press('j');
    }
    expect(await focusedToken()).toBe(token);
  };

  it('the empty state loads without errors and passes axe', { timeout: 120_000 }, async () => {
    await page.goto(center.served.url);
    await page.locator('#live', { hasText: 'live' }).waitFor();
    await page.locator('#empty').waitFor({ state: 'visible' });
    await shot('empty');
    expect(await seriousAxeFindings(page)).toEqual([]);
    // The favicon is served: a 404 would show up here as a console error.
    expect(browser.errors).toEqual([]);
  });

  it('answers a question, then approves with changes, with the keyboard alone; the context tells the story', {
    timeout: 300_000,
  }, async () => {
    // Every toast, as the page shows them one after another.
    await page.evaluate(`window.toasts = [];
      new MutationObserver(() => window.toasts.push(document.getElementById('toast').textContent))
        .observe(document.getElementById('toast'), { childList: true, characterData: true, subtree: true })`);
    const toasts = () => page.evaluate<string[]>('window.toasts');
    const where = await exec('trip-keys', { env });
    await row(where).waitFor();
    await expect(row(where).locator('.badge').textContent()).resolves.toBe('high');
    await expect(row(where).locator('.kind').textContent()).resolves.toBe('question');

    // j/k move the focus to the row, Enter opens it, a digit picks an option.
    await keyTo(where);
    await page.keyboard.press('Enter');
    await expect(page.locator('#detail-question').textContent()).resolves.toBe(
      'Where would you like to go?',
    );
    await page.locator('#detail .goal', { hasText: 'Plan a trip' }).waitFor();
    await page.keyboard.press('2');
    await row(where).waitFor({ state: 'detached' });
    expect(await toasts()).toContain('Answered “Where would you like to go?” in trip-keys');

    // The next question (asked by the resumed run): Enter opens it, type, Ctrl+Enter sends.
    const days = await until(() => pendingOf('trip-keys', [where]), 'the second question');
    await row(days).waitFor();
    await keyTo(days);
    await page.keyboard.press('Enter');
    await expect(page.locator('#answer-text:focus').count()).resolves.toBe(1);
    await page.keyboard.type('5');
    await page.keyboard.press('Control+Enter');
    await row(days).waitFor({ state: 'detached' });

    // The approval, with its context: the proposed action and its arguments, the goal, the
    // run's questions so far, and the conversation's messages (collapsed until asked for).
    const approval = await until(() => pendingOf('trip-keys', [where, days]), 'the approval');
    await row(approval).waitFor();
    await expect(row(approval).locator('.kind').textContent()).resolves.toBe('approval');
    await keyTo(approval);
    await page.keyboard.press('Enter');
    const detail = page.locator('#detail');
    await detail.locator('.proposal').waitFor();
    await expect(detail.locator('.proposal h3').textContent()).resolves.toBe('Proposed action');
    await expect(detail.locator('.proposal dd').allTextContents()).resolves.toEqual([
      'Book flights and a hotel in Kyoto for 5 days',
      'Estimated cost: 1,240 EUR',
    ]);
    await expect(detail.locator('.history li').allTextContents()).resolves.toEqual([
      'Where would you like to go? → accepted: Kyoto (by ada)',
      'How many days in Kyoto? → accepted: 5 (by ada)',
      'Approve: Book flights and a hotel in Kyoto for 5 days? (Estimated cost: 1,240 EUR) → waiting for an answer',
    ]);
    await expect(detail.locator('.messages li').first().isVisible()).resolves.toBe(false);
    await detail.locator('.messages summary').click();
    await expect(detail.locator('.messages li').last().textContent()).resolves.toContain(
      '[approve {"action":"Book flights and a hotel in Kyoto for 5 days"',
    );
    await shot('approval-with-context');
    await page.screenshot({
      path: path.join(ARTIFACTS, 'approval-center-desktop.png'),
      fullPage: true,
    });
    expect(await seriousAxeFindings(page)).toEqual([]);

    // Approve with changes: e opens the editor with the proposed action, Ctrl+Enter sends.
    await page.keyboard.press('e');
    await expect(page.locator('#changes-text:focus').inputValue()).resolves.toBe(
      'Book flights and a hotel in Kyoto for 5 days',
    );
    await page.keyboard.press('Control+a');
    await page.keyboard.type('Book the flights only, no hotel');
    await page.keyboard.press('Control+Enter');
    await row(approval).waitFor({ state: 'detached' });
    expect(await toasts()).toContain(
      'Approved “Approve: Book flights and a hotel in Kyoto for 5 days? (Estimated cost: 1,240 EUR)” in trip-keys',
    );

    // `runner wake` resumes it; the resumed turn read the changes (its recorded transcript).
    await page.keyboard.press('r');
    const recent = page.locator(`#recent-list li[data-token="${approval}"]`);
    await recent.and(page.locator('[data-outcome="completed"]')).waitFor();
    await expect(recent.locator('.answer').textContent()).resolves.toBe(
      'accepted · approved with changes: Book the flights only, no hotel',
    );
    // The audit trail: the operator behind the page (`serve --operator ada`).
    await expect(recent.locator('.by').textContent()).resolves.toBe('by ada');
    await recent.locator('button.open').click();
    const done = page.locator('#recent-detail');
    await done.locator('.run-status[data-run-status="completed"]').waitFor();
    await done.locator('.messages summary').click();
    await expect(done.locator('.messages li').allTextContents()).resolves.toContain(
      'user: [result: approved with changes: Book the flights only, no hotel]',
    );
    expect(await seriousAxeFindings(page)).toEqual([]);
    expect(browser.errors).toEqual([]);
  });

  it("edits a gated call's arguments, checked against the tool's schema before they are sent, then approves", {
    timeout: 300_000,
  }, async () => {
    const started = await run(
      [
        'exec',
        'Pay invoice 42',
        '--conversation',
        'gated-page',
        '--model',
        'scripted:gated',
        '--json',
      ],
      env,
    );
    const transfer = started.events.find((e) => e.type === 'run-waiting')?.token as string;
    expect(transfer, started.stderr).toBeTruthy();
    // The queue as it loads (the test before left the recent tab open).
    await page.goto(center.served.url);
    await page.locator('#live', { hasText: 'live' }).waitFor();
    await row(transfer).waitFor();
    await keyTo(transfer);
    await page.keyboard.press('Enter');
    // Escape leaves the note's box; e opens the arguments as JSON, as the model gave them.
    await page.keyboard.press('Escape');
    await page.keyboard.press('e');
    const edit = page.locator('#arguments-text:focus');
    expect(JSON.parse(await edit.inputValue())).toEqual({
      to: 'PT50000201231234567890154',
      amount: 1240,
      currency: 'EUR',
      reference: 'invoice 42',
    });
    // Arguments that do not fit the schema (from the API) are not sent.
    await edit.fill(
      JSON.stringify({ to: 'PT50000201231234567890154', amount: -5, currency: 'XYZ' }),
    );
    await page.locator('#send-arguments').click();
    await expect(page.locator('#detail .error').textContent()).resolves.toBe(
      'Not sent, the arguments do not fit transfer_funds: arguments.amount: more than 0; arguments.currency: expected one of "EUR", "USD", "GBP"',
    );
    expect(await pendingOf('gated-page')).toBe(transfer);
    await shot('gated-edit');
    expect(await seriousAxeFindings(page)).toEqual([]);
    const edited = { to: 'PT50000201231234567890154', amount: 1000, currency: 'EUR' };
    await page.locator('#arguments-text').fill(JSON.stringify(edited));
    await page.locator('#arguments-text').press('Control+Enter');
    await row(transfer).waitFor({ state: 'detached' });

    // The edited arguments ran: the email the resumed turn asks to send next says so.
    const email = await until(() => pendingOf('gated-page', [transfer]), 'the email approval');
    await row(email).waitFor();
    await keyTo(email);
    await page.keyboard.press('Enter');
    await page.locator('#send').click();
    await row(email).waitFor({ state: 'detached' });
    const shown = await until(async () => {
      const show = await run(['show', 'gated-page', '--json'], env);
      const record = show.events.find((e) => e.type === 'run') as
        | {
            run: { status: string };
            messages: Array<{ content: Array<{ type: string; content?: unknown }> }>;
          }
        | undefined;
      return record?.run.status === 'completed' && record;
    }, 'the run to complete');
    const results = shown.messages.flatMap((m) =>
      m.content.filter((b) => b.type === 'tool_result'),
    );
    expect(results.map((r) => r.content)).toEqual([
      `The person changed the arguments before approving; transfer_funds ran with ${JSON.stringify(edited)}. Result: transferred 1000 EUR to ${edited.to} (transfer ${transfer})`,
      `email sent to billing@atlas.example: "Invoice 42 paid" (message ${email})`,
    ]);
    expect(browser.errors).toEqual([]);
  });

  it("shows a worker's question with its source thread and sub-task; an unset priority has no badge", {
    timeout: 120_000,
  }, async () => {
    const sql = postgres(center.database.url, { max: 1, onnotice: () => {} });
    try {
      await new AskUserStore(drizzle({ client: sql })).insert(workerPause);
    } finally {
      await sql.end();
    }
    await page.locator('#tab-pending').click();
    await row(workerPause.token).waitFor();
    await expect(row(workerPause.token).locator('.badge').count()).resolves.toBe(0);
    await expect(row(workerPause.token).locator('.via').textContent()).resolves.toBe('via w2');
    await row(workerPause.token).locator('button.open').click();
    await expect(page.locator('#detail .source').textContent()).resolves.toBe(
      'Asked by worker w2 of conversation trip-team (via delegate)Sub-task: Find flights to Kyoto',
    );
    expect(await seriousAxeFindings(page)).toEqual([]);
    // The dark scheme has colours of its own: they must read as well.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.locator('#tab-recent').click();
    expect(await seriousAxeFindings(page)).toEqual([]);
    await page.locator('#tab-pending').click();
    expect(await seriousAxeFindings(page)).toEqual([]);
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('on a 390 px phone: the queue first, the detail on tap, touch targets of 44 px', {
    timeout: 120_000,
  }, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(center.served.url);
    await row(workerPause.token).waitFor();
    await expect(page.locator('#detail').isVisible()).resolves.toBe(false);
    await shot('phone-queue');
    // Every visible control that is too small to tap, as "TAG#id.class WxH".
    const small = () =>
      page.evaluate<string[]>(`[
        ...document.querySelectorAll(
          'button, select, textarea, summary, input:not([type=checkbox]), label.check-area',
        ),
      ]
        .filter((e) => e.offsetParent !== null)
        .map((e) => ({ e, box: e.getBoundingClientRect() }))
        .filter(({ box }) => box.height < 44 || box.width < 44)
        .map(({ e, box }) => e.tagName + '#' + e.id + '.' + e.className + ' ' + box.width + 'x' + box.height)`);
    expect(await small()).toEqual([]);
    await row(workerPause.token).locator('button.open').click();
    await expect(page.locator('#pending-list').isVisible()).resolves.toBe(false);
    await page.locator('#detail .source').waitFor();
    await shot('phone-detail');
    expect(await small()).toEqual([]);
    await expect(
      page.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1'),
    ).resolves.toBe(true);
    expect(await seriousAxeFindings(page)).toEqual([]);
    await page.locator('#detail .back').click();
    await row(workerPause.token).waitFor({ state: 'visible' });
    await expect(page.locator('#detail').isVisible()).resolves.toBe(false);
    expect(browser.errors).toEqual([]);
  });
});
