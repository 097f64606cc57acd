import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, serverForTests } from '@internal/pg-test';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { describeAuditFlow } from './audit-flow.js';
import { runInProcess } from './run-cli.js';

const server = await serverForTests();
const scratch = mkdtempSync(path.join(tmpdir(), 'runner-audit-'));
const keyFile = path.join(scratch, 'audit.key');
writeFileSync(keyFile, 'a key for the tests, 32 bytes ok\n', { mode: 0o600 });
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A fresh database of its own, migrated, with the key in RUNNER_AUDIT_KEY_FILE. */
async function target(extra: Record<string, string> = {}) {
  const database = await createTestDatabase(server as NonNullable<typeof server>);
  const env = { DATABASE_URL: database.url, ...extra };
  const migrated = await runInProcess(['migrate'], { env });
  expect(migrated.code, migrated.stderr).toBe(0);
  const sql = postgres(database.url, { onnotice: () => {}, max: 1 });
  return {
    args: [],
    env,
    sql: async (query: string) => [...(await sql.unsafe(query))] as Record<string, unknown>[],
    close: async () => {
      await sql.end();
      await database.drop();
    },
  };
}

describe.skipIf(!server)('on PostgreSQL', () => {
  describeAuditFlow('PostgreSQL', () => target({ RUNNER_AUDIT_KEY_FILE: keyFile }));

  it('without a key records nothing, and audit verify says how to turn it on', async () => {
    const t = await target();
    try {
      const run = await runInProcess(['exec', 'Plan me a trip', '--conversation', 'off'], {
        env: t.env,
      });
      expect(run.code, run.stderr).toBe(0);
      expect(await t.sql('select count(*)::int as n from aura.audit_entries')).toEqual([{ n: 0 }]);
      const verify = await runInProcess(['audit', 'verify'], { env: t.env });
      expect(verify.code).toBe(2);
      expect(verify.stderr).toContain(
        'the audit log is off: no audit key. Set RUNNER_AUDIT_KEY_FILE',
      );
      const listed = await runInProcess(['audit'], { env: t.env });
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain('the audit log is off');
    } finally {
      await t.close();
    }
  });

  it('with the key in RUNNER_AUDIT_KEY the same log verifies; with another key it does not', async () => {
    const t = await target({ RUNNER_AUDIT_KEY: 'a key for the tests, 32 bytes ok' });
    try {
      const run = await runInProcess(['exec', 'Plan me a trip', '--conversation', 'k'], {
        env: t.env,
      });
      expect(run.code, run.stderr).toBe(0);
      const byFile = { DATABASE_URL: t.env.DATABASE_URL, RUNNER_AUDIT_KEY_FILE: keyFile };
      expect((await runInProcess(['audit', 'verify'], { env: byFile })).code).toBe(0);
      const other = { ...t.env, RUNNER_AUDIT_KEY: 'another key of sixteen bytes or more' };
      const failed = await runInProcess(['audit', 'verify'], { env: other });
      expect(failed.code).toBe(1);
      expect(failed.stdout).toContain('conversation:k #1');
    } finally {
      await t.close();
    }
  });
});
