import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from '@internal/pg-test';
import axe from 'axe-core';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { run, type Served, type Started, serve, start } from './serve-harness.js';

/** The Chromium the browser tests drive (CHROMIUM_PATH overrides). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where the browser tests write their screenshots, for a reviewer to look at. */
export const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

/** True when Chromium is installed; on CI a missing one is an error, not a skip. */
export function hasChromium(): boolean {
  const found = existsSync(CHROMIUM);
  if (!found && process.env.CI === 'true') {
    throw new Error(
      `CI=true but there is no Chromium at ${CHROMIUM}: .ci/run installs the Debian chromium package`,
    );
  }
  return found;
}

/** A headless Chromium with one page, and what went wrong on that page. */
export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Uncaught exceptions and console errors (a failed request, such as a 404 favicon). */
  errors: string[];
  close(): Promise<void>;
}

/** Launches headless Chromium in a profile folder of its own (removed by `close`). */
export async function launchBrowser(viewport = { width: 1200, height: 800 }): Promise<Browser> {
  const profile = mkdtempSync(path.join(tmpdir(), 'runner-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('dialog', (dialog) => void dialog.dismiss());
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The serious and critical accessibility findings of axe-core on the page as it is now,
 * one line each (rule, impact, the elements it found).
 */
export async function seriousAxeFindings(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(axe.source);
  const results = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as {
    violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: unknown[] }> }>;
  };
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 5)
          .join(', ')}`,
    );
}

/**
 * An approval center as an operator runs it on PostgreSQL: a database of its own, `runner
 * serve --no-wake` and `runner wake` as separate processes, and a browser.
 */
export interface ApprovalCenter {
  database: TestDatabase;
  env: Record<string, string>;
  served: Served;
  waker: Started;
  browser: Browser;
  /** Closes the browser, stops both processes (each must exit 0) and drops the database. */
  close(): Promise<void>;
}

/** Starts an {@link ApprovalCenter} on the test server `serverUrl`, with `settings` in its env. */
export async function startApprovalCenter(
  serverUrl: string,
  settings: Record<string, string> = {},
): Promise<ApprovalCenter> {
  const database = await createTestDatabase(serverUrl);
  const env = { ...settings, DATABASE_URL: database.url };
  const migrated = await run(['migrate'], env);
  expect(migrated.code, migrated.stderr).toBe(0);
  const served = await serve(['--no-wake', '--operator', 'ada'], env);
  const waker = start(['wake', '--json'], env);
  const browser = await launchBrowser();
  return {
    database,
    env,
    served,
    waker,
    browser,
    async close() {
      await browser.close();
      expect(await served.stop()).toBe(0);
      expect(await waker.stop()).toBe(0);
      await database.drop();
    },
  };
}
