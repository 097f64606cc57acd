import { serverForTests } from '@internal/pg-test';
import { AskUserStore } from '@x/askuser';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalCenter, hasChromium, startApprovalCenter } from './browser-harness.js';
import { exec } from './serve-harness.js';

const server = await serverForTests();
const chromiumFound = hasChromium();

// What a waiting question shows an operator: its deadline and the time left (RUNNER_DEADLINE),
// the approvals it has of the quorum it needs (RUNNER_QUORUM), its reminder and escalation
// (RUNNER_REMIND, RUNNER_ESCALATE), each time as people say it, updated live.
describe.skipIf(!server || !chromiumFound)('approval center: deadline and approvals', () => {
  let center: ApprovalCenter;
  beforeAll(async () => {
    center = await startApprovalCenter(server as string, {
      RUNNER_DEADLINE: 'ask_user=2h:decline',
      RUNNER_QUORUM: 'ask_user=2',
      RUNNER_REMIND: 'ask_user=1s',
      RUNNER_ESCALATE: 'ask_user=30m:@carol',
    });
  }, 300_000);
  afterAll(async () => {
    await center?.close();
  });

  it('shows the deadline, the time left, the approvals so far and who gave them, the reminder and the escalation, in words ("in 30 min", "1 h ago")', {
    timeout: 300_000,
  }, async () => {
    const { page } = center.browser;
    const token = await exec('trip-wait', { env: center.env });
    // The page's clock runs as the real one until the test moves it on.
    await page.clock.install();
    await page.goto(center.served.url);
    const row = page.locator(`#pending-list li[data-token="${token}"]`);
    await row.waitFor();
    expect(await row.locator('.left').textContent()).toMatch(/^(2 h|1\d\d min) left$/);
    expect(await row.locator('.approvals').textContent()).toBe('0 of 2 approvals');

    // Another operator's approval is recorded; the question stays, and the page says so.
    const sql = postgres(center.database.url, { max: 1, onnotice: () => {} });
    try {
      const outcome = await new AskUserStore(drizzle({ client: sql })).markResumed(
        token,
        { action: 'accept', content: 'Lisbon' },
        { answeredBy: 'bob' },
      );
      expect(outcome.resolved).toBe(false);
    } finally {
      await sql.end();
    }
    await row.locator('.approvals', { hasText: '1 of 2 approvals' }).waitFor();
    await row.locator('button.open').click();
    const wait = page.locator('#wait');
    await wait.waitFor();
    expect(await wait.locator('.deadline').textContent()).toMatch(
      /^Deadline in (2 h|1\d\d min) · (2 h|1\d\d min) left · then decline$/,
    );
    expect(await wait.locator('.deadline time').getAttribute('datetime')).toMatch(/^\d{4}-.+Z$/);
    expect(await wait.locator('.quorum').textContent()).toBe('1 of 2 approvals (bob)');
    // The reminder came a second after the question (the wake loop applied it).
    await wait.locator('.reminder', { hasText: 'Reminded now' }).waitFor();
    expect(await wait.locator('.escalation').textContent()).toMatch(
      /^Escalates to @carol in (30|29) min$/,
    );
    // An hour on, by the page's clock: the times move on without asking the server.
    await page.clock.fastForward('01:00:00');
    await wait.locator('.reminder', { hasText: 'Reminded 1 h ago' }).waitFor();
    expect(await page.locator('#wait .escalation').textContent()).toMatch(
      /^Escalates to @carol (30|31) min ago$/,
    );
    expect(await page.locator('#wait .deadline').textContent()).toMatch(
      /^Deadline in (60|59|58) min · (60|59|58) min left · then decline$/,
    );
    expect(await row.locator('.left').textContent()).toMatch(/^(60|59|58) min left$/);
    expect(center.browser.errors).toEqual([]);
  });
});
