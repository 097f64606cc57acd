import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), 'summary-reporter-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs vitest on `spec` with the test command's summary reporter; resolves to its stdout. */
function runWithSummary(spec: string): Promise<string> {
  writeFileSync(path.join(dir, 'skips.spec.ts'), spec);
  writeFileSync(
    path.join(dir, 'vitest.config.mjs'),
    `export default { test: { globals: true, include: ['*.spec.ts'], reporters: [${JSON.stringify(
      path.join(root, 'scripts/summary-reporter.ts'),
    )}] } };\n`,
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--root', dir],
      { cwd: dir, encoding: 'utf8', env: { ...process.env, CI: '' } },
      (_error, stdout) => resolve(stdout),
    );
  });
}

describe("the test command's summary", () => {
  it('says, per file, how many tests were skipped and why', { timeout: 120_000 }, async () => {
    const stdout = await runWithSummary(`
describe.skipIf(true)('on PostgreSQL', () => {
  it('one', () => {});
  it('two', () => {});
});
it.runIf(false)('as another OS user', () => {});
it('over TLS', (t) => {
  t.skip('the server offers no TLS');
});
it('runs', () => {});
`);
    expect(stdout).toContain('tests: 1 passed, 0 failed, 4 skipped');
    expect(stdout).toContain('skipped tests, by file and why:');
    expect(stdout).toContain('  2 in skips.spec.ts: its condition skips "on PostgreSQL"');
    expect(stdout).toContain('  1 in skips.spec.ts: its condition skips "as another OS user"');
    expect(stdout).toContain('  1 in skips.spec.ts: the server offers no TLS');
  });
});
