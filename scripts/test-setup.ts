import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGLITE_TEMPLATE_ENV, writePgliteTemplate } from '../tools/pg-test/src/index.ts';

/**
 * Once per test run: a dump of a freshly initialised PGlite database, which every PGlite
 * suite loads instead of running initdb itself (seconds per file). Removed at the end.
 */
export default async function setup(): Promise<() => void> {
  // Every project inherits this file; the first one to run it makes the template for all.
  if (process.env[PGLITE_TEMPLATE_ENV]) return () => {};
  console.log('tests: preparing a PGlite template for the SQL suites');
  const dir = mkdtempSync(path.join(tmpdir(), 'x-test-run-'));
  const template = path.join(dir, 'pglite.tar');
  await writePgliteTemplate(template);
  process.env[PGLITE_TEMPLATE_ENV] = template;
  return () => rmSync(dir, { recursive: true, force: true });
}
