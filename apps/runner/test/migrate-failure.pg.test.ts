import { createTestDatabase, serverForTests } from '@internal/pg-test';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

const server = await serverForTests();

describe.skipIf(!server)('a migration the server refuses', () => {
  it('is one line naming the package, the migration and the server message, exit 4', async () => {
    const database = await createTestDatabase(server);
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      // Made by hand before the first use: the first migration of @x/askuser creates it.
      await sql`create schema aura`;
      const migrated = await runCli(['migrate'], { env: { DATABASE_URL: database.url } });
      expect(migrated.code).toBe(4);
      expect(migrated.stderr.trim()).toBe(
        'error: migrating @x/askuser failed: migration 0000_paused_states (drizzle/0000_paused_states.sql): schema "aura" already exists (SQLSTATE 42P06)',
      );
    } finally {
      await sql.end({ timeout: 5 });
      await database.drop();
    }
  });
});
