import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, hasChromium, launchBrowser, seriousAxeFindings } from './browser-harness.js';
import { dataDirs, exec, run, type Served, serve, until } from './serve-harness.js';
import { type SmtpReceiver, startSmtpReceiver, unquote } from './smtp-receiver.js';
import { newSecret, startReceiver, type WebhookReceiver } from './webhook-receiver.js';

// The approval center's notifications in headless Chromium, on the embedded default (one
// serve process, which delivers): an admin sees the dead letter of a refused webhook with
// its error and retries it; a viewer sees no such view; an emailed decision link opens a
// confirmation page that answers nothing, and its confirm answers the question once.

const chromiumFound = hasChromium();
const newDataDir = dataDirs();
const TOKEN = 'the admin token of the notifications test';
describe.skipIf(!chromiumFound)('notifications in headless Chromium', { timeout: 120_000 }, () => {
  let receiver: WebhookReceiver;
  let smtp: SmtpReceiver | undefined;
  let served: Served | undefined;
  let browser: Browser | undefined;
  let token = '';
  let viewerKey = '';

  beforeAll(async () => {
    receiver = await startReceiver();
    receiver.answer = () => 503;
    smtp = await startSmtpReceiver();
    const data = newDataDir();
    const env = {
      RUNNER_WEBHOOK_URL: receiver.url,
      RUNNER_WEBHOOK_SECRET: newSecret(),
      RUNNER_NOTIFY: 'webhook=question.created,email=question.created',
      // One attempt: the refused webhook is the dead letter at once.
      RUNNER_NOTIFY_MAX_ATTEMPTS: '1',
      RUNNER_SMTP_URL: smtp.url,
      RUNNER_EMAIL_TO: 'ada@example.com',
      RUNNER_PUBLIC_URL: 'https://approvals.example.com/',
      RUNNER_DECISION_KEY: 'a decision key of the test, 32 b',
    };
    token = await exec('notify-trip', { data, env });
    const added = await run(
      ['operators', 'add', 'vic', '--role', 'viewer', '--data', data, '--json'],
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    viewerKey = added.events.find((e) => e.type === 'operator-added')?.key as string;
    served = await serve(['--data', data, '--token', TOKEN], env);
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    await receiver?.close();
    await smtp?.close();
  });

  it('a viewer sees no notifications; an admin sees the refused webhook with its error and retries it', async () => {
    const { page, errors } = browser as Browser;
    const url = served?.url as string;
    const signIn = async (key: string) => {
      await page.locator('#sign-in-key').fill(key);
      await page.locator('#sign-in-submit').click();
      await page.locator('#who').waitFor();
    };
    await page.goto(url);
    await signIn(viewerKey);
    await page.locator('#who-name', { hasText: 'vic · viewer' }).waitFor();
    await expect(page.locator('#notifications').isHidden()).resolves.toBe(true);
    await page.locator('#sign-out').click();
    await page.locator('#sign-in').waitFor();
    // The page's requests in flight at the sign-out are refused (401), as they must be.
    errors.length = 0;

    await signIn(TOKEN);
    await page.locator('#notifications summary').click();
    const failed = page.locator('#notifications-list tr[data-status="failed"]');
    // serve delivers in the background: refresh until the webhook was refused.
    await until(
      async () => {
        await page.waitForTimeout(250);
        await page.locator('#notifications-refresh').click();
        return (await failed.count()) > 0 || undefined;
      },
      'the refused webhook to be the dead letter',
      30_000,
    );
    await expect(failed.locator('td').allTextContents()).resolves.toEqual([
      expect.any(String),
      'question.created',
      'webhook',
      'failed',
      '1',
      expect.stringContaining('503'),
      'Retry',
    ]);
    const id = (await failed.getAttribute('data-id')) as string;
    const row = page.locator(`#notifications-list tr[data-id="${id}"]`);
    // The email went out: delivered, no Retry.
    await expect(
      page.locator('#notifications-list tr[data-status="delivered"] td').nth(2).textContent(),
    ).resolves.toBe('email');

    await expect(seriousAxeFindings(page)).resolves.toEqual([]);

    receiver.answer = () => 204;
    await row.locator('button.retry').click();
    await page
      .locator('#toast', { hasText: 'question.created to webhook is due again.' })
      .waitFor();
    await until(
      async () => {
        await page.waitForTimeout(250);
        await page.locator('#notifications-refresh').click();
        return (await row.getAttribute('data-status')) === 'delivered' || undefined;
      },
      'the retried webhook to be delivered',
      30_000,
    );
    await expect(row.locator('button.retry').count()).resolves.toBe(0);
    expect(receiver.received.filter((r) => r.status === 204)).toHaveLength(1);

    // A status at a time, a page at a time: pages of one here, Older for the next.
    await page.locator('#notifications').evaluate((el) => el.setAttribute('data-page-size', '1'));
    const rows = page.locator('#notifications-list tr[data-id]');
    const older = page.locator('#notifications-older');
    await page.locator('#notifications-status').selectOption('delivered');
    await until(async () => (await rows.count()) === 1 || undefined, 'the first page', 10_000);
    await expect(older.isVisible()).resolves.toBe(true);
    await older.click();
    await until(async () => (await rows.count()) === 2 || undefined, 'the older page', 10_000);
    await expect(rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.status))).resolves.toEqual([
      'delivered',
      'delivered',
    ]);
    await older.click();
    await until(async () => (await older.isHidden()) || undefined, 'the last page', 10_000);
    await expect(rows.count()).resolves.toBe(2);
    await page.locator('#notifications-status').selectOption('failed');
    await page
      .locator('#notifications-list td.hint', { hasText: 'No notifications here.' })
      .waitFor();
    expect(errors).toEqual([]);
  });

  it('a decision link opens a confirmation page that answers nothing; confirming answers once', async () => {
    const { page, errors } = browser as Browser;
    errors.length = 0;
    const url = served?.url as string;
    const messages = (smtp?.messages ?? []).map(unquote);
    const message = messages.find((m) => /^To: ada@example\.com/m.test(m)) ?? '';
    const links = message.match(/https:\/\/approvals\.example\.com\/decide\?link=[\w.-]+/g) ?? [];
    expect(links.length).toBeGreaterThan(1);
    // A proxy would put serve at the public address.
    const at = (link: string) => new URL(new URL(link).pathname + new URL(link).search, url).href;
    const pending = async () =>
      (
        await fetch(new URL(`/api/pauses/${token}`, url), {
          headers: { authorization: `Bearer ${TOKEN}` },
        })
      ).status;

    await page.goto(at(links[0] as string));
    const confirm = page.locator('form[action="/decide"] button[type="submit"]');
    await expect(confirm.textContent()).resolves.toMatch(/^Confirm: /);
    expect(await pending(), 'opening the link answers nothing').toBe(200);
    await confirm.click();
    await page.locator('body', { hasText: 'by ada@example.com' }).waitFor();
    expect(await pending(), 'answered').toBe(409);
    // The link again, or another of the question: answered, no confirm any more.
    for (const link of [links[0], links[1]]) {
      const again = await page.goto(at(link as string));
      expect(again?.status()).toBe(409);
      await expect(page.locator('body').textContent()).resolves.toContain('answered already');
      await expect(page.locator('form[action="/decide"]').count()).resolves.toBe(0);
    }
    // The 409s are the page's own console errors; nothing else went wrong.
    expect(errors.filter((e) => !e.includes('409'))).toEqual([]);
  });
});
