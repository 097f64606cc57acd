import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLI, DATA_TEMPLATE_ENV } from './run-cli.js';

/**
 * Once per test run: a data folder that `runner migrate` has set up. Tests copy it instead
 * of paying PGlite's initdb and the migrations in every fresh folder (several seconds each).
 */
export default function setup(): () => void {
  if (process.env[DATA_TEMPLATE_ENV]) return () => {};
  console.log('tests: preparing a migrated data folder for the runner tests');
  const dir = mkdtempSync(path.join(tmpdir(), 'runner-template-'));
  execFileSync(process.execPath, [CLI, 'migrate', '--data', dir], {
    env: { ...process.env, DATABASE_URL: '' },
    stdio: 'ignore',
  });
  process.env[DATA_TEMPLATE_ENV] = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
