import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, hasChromium, launchBrowser, seriousAxeFindings } from './browser-harness.js';
import { call, dataDirs, json, run, type Served, serve, until } from './serve-harness.js';

// What the page offers and says to each operator, in headless Chromium on the embedded
// default: a requester barred from their own approval is told so (separation of duties);
// Stop conversation is an admin's only, and asks before it cancels anything; a quorum's
// answer names every approver; gated calls' titles and audiences read as words, not JSON;
// the Recent tab shows no empty detail box before a question is selected.

const chromiumFound = hasChromium();
const newDataDir = dataDirs();
const TOKEN = 'the admin token of the operators test';

describe.skipIf(!chromiumFound)(
  'what each operator sees in headless Chromium',
  {
    timeout: 180_000,
  },
  () => {
    let served: Served | undefined;
    let browser: Browser | undefined;
    const keys: Record<string, string> = {};
    const tokens: Record<string, string> = {};

    beforeAll(async () => {
      const data = newDataDir();
      for (const name of ['bob', 'eve']) {
        const added = await run(
          ['operators', 'add', name, '--role', 'finance', '--data', data, '--json'],
          {},
        );
        expect(added.code, added.stderr).toBe(0);
        keys[name] = added.events.find((e) => e.type === 'operator-added')?.key as string;
      }
      // Every exec before serve: the embedded default's serve holds the data folder.
      const exec = async (conversation: string, env: Record<string, string>, more: string[]) => {
        const args = ['exec', 'Go', '--conversation', conversation, '--data', data, '--json'];
        const started = await run([...args, ...more], env);
        expect(started.code, started.stderr).toBe(0);
        tokens[conversation] = started.events.find((e) => e.type === 'run-waiting')
          ?.token as string;
      };
      await exec('own-pay', { RUNNER_REQUESTER_MAY_NOT_APPROVE: 'approve' }, [
        '--model',
        'scripted:payment',
        '--requester',
        'bob',
      ]);
      await exec('gated-pay', {}, ['--model', 'scripted:gated']);
      await exec('two-of-two', { RUNNER_QUORUM: 'ask_user=2' }, []);
      await exec('to-stop', {}, []);
      served = await serve(['--data', data, '--token', TOKEN], {});
      browser = await launchBrowser();
    }, 180_000);
    afterAll(async () => {
      await browser?.close();
      await served?.stop();
    });

    // Each test signs in afresh, whatever the one before left.
    const signIn = async (key: string) => {
      const { page, context } = browser as Browser;
      await context.clearCookies();
      await page.goto(served?.url as string);
      await page.locator('#sign-in-key').fill(key);
      await page.locator('#sign-in-submit').click();
      await page.locator('#who').waitFor();
    };
    const row = (token: string | undefined) =>
      (browser as Browser).page.locator(`#pending-list li[data-token="${token}"]`);
    const pauseStatus = async (token: string | undefined) =>
      (
        await call(new URL(`/api/pauses/${token}`, served?.url).toString(), {
          headers: { authorization: `Bearer ${TOKEN}` },
        })
      ).status;

    it('an operator: the real reason a question is read-only, no Stop conversation, titles and audiences in words', async () => {
      const { page, errors } = browser as Browser;
      await signIn(keys.bob as string);

      await row(tokens['own-pay']).locator('button.open').click();
      const readOnly = page.locator('#read-only');
      await expect(readOnly.getAttribute('data-reason')).resolves.toBe('requester');
      await expect(readOnly.textContent()).resolves.toContain('separation of duties');
      await expect(readOnly.textContent()).resolves.not.toContain(
        'a viewer, or not in its audience',
      );
      // The audience the model named, as words.
      const audience = page.locator('#detail dl.args dt', { hasText: 'audience' }).locator('+ dd');
      await expect(audience.textContent()).resolves.toBe('roles: finance · travel');

      const gatedTitle =
        'Approve transfer_funds (to: PT50000201231234567890154, amount: 1240, currency: EUR, reference: invoice 42)?';
      await expect(row(tokens['gated-pay']).locator('.q').textContent()).resolves.toBe(gatedTitle);
      await row(tokens['gated-pay']).locator('button.open').click();
      await expect(page.locator('#detail-question').textContent()).resolves.toBe(gatedTitle);

      // Bob may answer this one, but only an admin may stop its conversation: no such control.
      await row(tokens['to-stop']).locator('button.open').click();
      await page.locator('#send').waitFor();
      await expect(page.locator('#stop').count()).resolves.toBe(0);
      expect(errors).toEqual([]);
    });

    it('an admin: every approver of a quorum, no empty Recent box, a stop only once confirmed', async () => {
      const { page, errors } = browser as Browser;
      await signIn(TOKEN);
      errors.length = 0;

      for (const name of ['bob', 'eve']) {
        const body = json({ action: 'accept', content: 'Lisbon' });
        const answered = await call(
          new URL(`/api/pauses/${tokens['two-of-two']}/answer`, served?.url).toString(),
          { ...body, headers: { ...body.headers, authorization: `Bearer ${keys[name]}` } },
        );
        expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      }
      await page.locator('#tab-recent').click();
      await expect(page.locator('#recent-detail').isHidden()).resolves.toBe(true);
      const quorumRow = page.locator(`#recent-list li[data-token="${tokens['two-of-two']}"]`);
      await quorumRow.locator('.by', { hasText: 'by bob, eve' }).waitFor();
      await quorumRow.locator('button.open').click();
      await expect(page.locator('#recent-detail').isVisible()).resolves.toBe(true);
      const asked = page.locator(
        `#recent-detail .history li[data-token="${tokens['two-of-two']}"]`,
      );
      await expect(asked.textContent()).resolves.toContain('(by bob, eve)');

      await page.locator('#tab-pending').click();
      await row(tokens['to-stop']).locator('button.open').click();
      await page.locator('#stop').click();
      const what = page.locator('#stop-what');
      await expect(what.textContent()).resolves.toBe(
        'Stop conversation to-stop? This cancels its run (it is not resumed) and closes its 1 open question: “Where would you like to go?”.',
      );
      await expect(seriousAxeFindings(page)).resolves.toEqual([]);
      // Asked, not sent: keeping it stops nothing.
      await page.locator('#stop-keep').click();
      await expect(page.locator('#stop-confirm').isHidden()).resolves.toBe(true);
      expect(await pauseStatus(tokens['to-stop'])).toBe(200);

      await page.locator('#stop').click();
      await page.locator('#stop-confirm-send').click();
      await row(tokens['to-stop']).waitFor({ state: 'detached' });
      await until(
        async () => (await pauseStatus(tokens['to-stop'])) === 409,
        'the stop to close it',
      );
      expect(errors).toEqual([]);
    });
  },
);
