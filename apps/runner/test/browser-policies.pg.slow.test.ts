import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serverForTests } from '@internal/pg-test';
import { AskUserStore } from '@x/askuser';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApprovalCenter,
  ARTIFACTS,
  hasChromium,
  seriousAxeFindings,
  startApprovalCenter,
} from './browser-harness.js';
import { run } from './serve-harness.js';

const server = await serverForTests();
const chromiumFound = hasChromium();

const folder = mkdtempSync(path.join(tmpdir(), 'runner-browser-policies-'));
const RULES = path.join(folder, 'payments.cedar');
writeFileSync(
  RULES,
  `@id("big-transfers") @reason("transfers over 1,000 need two of finance")
@ask @audience("finance+@ada") @quorum("2") @deadline("1h") @default("decline")
permit (principal, action == Action::"transfer_funds", resource) when { context.input.amount.greaterThan(decimal("1000.0")) };

@id("no-gbp") @reason("no transfers in pounds")
forbid (principal, action == Action::"transfer_funds", resource) when { context.input.currency == "GBP" };
`,
);

// Why a policy asked a question, on its detail; the Policies tab with the active set's rules,
// hard or soft, and what each decided; no shadow section without a shadow set.
describe.skipIf(!server || !chromiumFound)(
  'approval center: why asked, and the Policies tab',
  () => {
    let center: ApprovalCenter;
    beforeAll(async () => {
      center = await startApprovalCenter(server as string, { RUNNER_POLICY: RULES });
    }, 300_000);
    afterAll(async () => {
      await center?.close();
    });

    it('shows the reason and rule of a question, then the rules with their counts, accessibly', {
      timeout: 300_000,
    }, async () => {
      const { page } = center.browser;
      const args = ['exec', 'Pay invoice 42', '--model', 'scripted:gated', '--json'];
      const started = await run([...args, '--conversation', 'why-asked'], center.env);
      const token = started.events.find((e) => e.type === 'run-waiting')?.token as string;
      expect(token, started.stderr).toBeDefined();
      await page.goto(center.served.url);
      await page.locator(`#pending-list li[data-token="${token}"] button.open`).click();
      const why = page.locator('#why');
      await why.waitFor();
      expect(await why.locator('.reason').textContent()).toBe(
        'Why asked: rule "big-transfers": transfers over 1,000 need two of finance',
      );
      expect(await why.locator('.rules code').first().textContent()).toBe('big-transfers');
      expect(await why.locator('.rules code').nth(1).getAttribute('title')).toMatch(/^sha256:/);

      await page.locator('#tab-policies').click();
      const asks = page.locator('#policies-rules tr[data-rule="big-transfers"]');
      await asks.waitFor();
      expect(await asks.getAttribute('data-denial')).toBe('soft');
      expect(await asks.locator('.decides').textContent()).toBe('asks (soft)');
      expect(await asks.locator('.settings').textContent()).toBe(
        'audience finance, @ada · quorum 2 approvals, 1 to decline · deadline 1 h, then decline',
      );
      expect(await asks.locator('.ask').textContent()).toBe('1');
      const denies = page.locator('#policies-rules tr[data-rule="no-gbp"]');
      expect(await denies.locator('.decides').textContent()).toBe('denies (hard)');
      expect(await denies.locator('.deny').textContent()).toBe('0');
      expect(await page.locator('#policy-hash').textContent()).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(await page.locator('#shadow').isHidden()).toBe(true);
      expect(await seriousAxeFindings(page)).toEqual([]);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: path.join(ARTIFACTS, 'approval-center-policies.png') });
      expect(center.browser.errors).toEqual([]);
    });

    it("escapes the control and bidi characters of a call's arguments and of a reason wherever it shows them", {
      timeout: 300_000,
    }, async () => {
      const { page } = center.browser;
      const args = {
        to: 'PT50\u202eevil',
        amount: 5,
        currency: 'EUR',
        reference: 'red\u001b[31m\nline',
      };
      const token = 'escaped-1';
      const sql = postgres(center.database.url, { max: 1, onnotice: () => {} });
      try {
        await new AskUserStore(drizzle({ client: sql })).insert({
          token,
          conversationId: 'escaped',
          kind: 'approve',
          question: 'Approve transfer_funds?',
          toolCallId: 'call_1',
          resumeContext: {
            gated: { tool: 'transfer_funds', arguments: args },
            policy: {
              outcome: 'ask',
              reason: 'rule "odd": it says \u001b[2J',
              ruleIds: ['odd'],
              policyHash: 'sha256:00',
              error: null,
            },
          },
        });
      } finally {
        await sql.end();
      }
      await page.locator('#tab-pending').click();
      const row = page.locator(`#pending-list li[data-token="${token}"]`);
      await row.waitFor();
      const title = (await row.locator('.q').textContent()) ?? '';
      expect(title).toContain('to: PT50\\u202eevil');
      expect(title).toContain('reference: red\\x1b[31m\\nline');
      // biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
      expect(title).not.toMatch(/[\u0000-\u001f\u202e]/);
      await row.locator('button.open').click();
      expect(await page.locator('#why .reason').textContent()).toBe(
        'Why asked: rule "odd": it says \\x1b[2J',
      );
      const edited = await page.locator('#arguments-text').inputValue();
      expect(edited).toContain('PT50\\u202eevil');
      expect(edited).not.toContain('\u202e');
      expect(JSON.parse(edited)).toEqual(args);
      await page.screenshot({ path: path.join(ARTIFACTS, 'approval-center-escaped.png') });
      expect(center.browser.errors).toEqual([]);
    });
  },
);
