import { createTestDatabase, type SqlTarget, serverForTests, sqlTargets } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { applyMigrations, rowsOf, type StoreDatabase } from './index.js';

const folder = new URL('../test/fixtures/migrations', import.meta.url);
const options = { folder, schema: 'x_kit_test', lockKey: 0x6b697474 };
const server = await serverForTests();

afterEach(() => {
  vi.restoreAllMocks();
});

for (const spec of await sqlTargets()) {
  describe.skipIf(spec.skip)(`applyMigrations on ${spec.kind}`, () => {
    let target: SqlTarget;
    let db: StoreDatabase;
    beforeAll(async () => {
      target = await spec.open();
      db = target.db;
    });
    afterAll(() => target?.close());

    it('applies each migration once, in its own table, also when called again and inside a transaction', async () => {
      await applyMigrations(db, options);
      await applyMigrations(db, options);
      await db.transaction((tx) => applyMigrations(tx, options));
      const applied = rowsOf(
        await db.execute(sql`select count(*)::int as n from x_kit_test.__migrations`),
      );
      expect(applied).toEqual([{ n: 2 }]);
      const columns = rowsOf(
        await db.execute(
          sql`select column_name as c from information_schema.columns where table_schema = 'x_kit_test' and table_name = 'things' order by ordinal_position`,
        ),
      );
      expect(columns.map((r) => r.c)).toEqual(['id', 'note']);
    });

    it("leaves a caller's transaction at its own client_min_messages", async () => {
      await db.transaction(async (tx) => {
        await tx.execute(sql`set local client_min_messages = 'log'`);
        await applyMigrations(tx, options);
        const [row] = rowsOf(
          await tx.execute(sql`select current_setting('client_min_messages') as level`),
        );
        expect(row?.level).toBe('log');
      });
    });
  });
}

describe.skipIf(server === undefined)('applyMigrations with stock postgres.js settings', () => {
  it('prints nothing on a fresh database nor on later starts (postgres.js logs notices by default)', async () => {
    const database = await createTestDatabase(server);
    // Default options: postgres.js hands every NOTICE to console.log.
    const client = postgres(database.url, { max: 1 });
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      const db = drizzle({ client }) as unknown as StoreDatabase;
      await applyMigrations(db, options);
      await applyMigrations(db, options);
      expect(log).not.toHaveBeenCalled();
      // The same statement outside migrate does print: the check above can fail.
      await client`create schema if not exists x_kit_test`;
      expect(log).toHaveBeenCalled();
    } finally {
      log.mockRestore();
      await client.end({ timeout: 5 });
      await database.drop();
    }
  });

  it('four processes migrating a fresh database at once apply each migration once', async () => {
    const database = await createTestDatabase(server);
    const clients = Array.from({ length: 4 }, () =>
      postgres(database.url, { max: 1, onnotice: () => {} }),
    );
    try {
      await Promise.all(
        clients.map((client) =>
          applyMigrations(drizzle({ client }) as unknown as StoreDatabase, options),
        ),
      );
      const [row] = await clients[0]!`select count(*)::int as n from x_kit_test.__migrations`;
      expect(row?.n).toBe(2);
    } finally {
      await Promise.all(clients.map((client) => client.end({ timeout: 5 })));
      await database.drop();
    }
  });
});
