import { createTestDatabase, type SqlTarget, serverForTests, sqlTargets } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  applyMigrations,
  failureReason,
  MigrationError,
  migrationsApplied,
  rowsOf,
  type StoreDatabase,
} from './index.js';

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

    it('migrationsApplied is true once every folder is applied, false for a missing migrations table or one behind', async () => {
      await applyMigrations(db, options);
      expect(await migrationsApplied(db, [options])).toBe(true);
      const absent = { folder, schema: 'x_kit_absent' };
      expect(await migrationsApplied(db, [options, absent]), 'no table yet').toBe(false);
      // Recorded up to an older migration than the folder's newest.
      const behind = { folder, schema: 'x_kit_behind' };
      await db.execute(sql`create schema if not exists x_kit_behind`);
      await db.execute(
        sql`create table if not exists x_kit_behind.__migrations (id serial primary key, hash text not null, created_at bigint)`,
      );
      await db.execute(
        sql`insert into x_kit_behind.__migrations (hash, created_at) values ('h', 1)`,
      );
      expect(await migrationsApplied(db, [options, behind]), 'one behind').toBe(false);
    });

    it("a migration the server refuses is named with its file and the server's message, and nothing of the run is applied", async () => {
      const broken = {
        folder: new URL('../test/fixtures/migrations-broken', import.meta.url),
        schema: 'x_kit_broken',
        lockKey: 0x6b697462,
      };
      const error = await applyMigrations(db, broken).catch((e: unknown) => e);
      expect(MigrationError.is(error)).toBe(true);
      expect(error).toMatchObject({
        code: 'migration_failed',
        migration: '0001_duplicate',
        sqlState: '42P07',
        reason:
          'migration 0001_duplicate (migrations-broken/0001_duplicate.sql): relation "base" already exists (SQLSTATE 42P07)',
      });
      expect(failureReason(error, 'the tables are missing')).toBe((error as MigrationError).reason);
      const [left] = rowsOf(
        await db.execute(sql`select to_regnamespace('x_kit_broken') is null as gone`),
      );
      expect(left).toEqual({ gone: true });
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

  // Each session has made catalog changes of its own before it waits on the second lock: then
  // PostgreSQL's `create schema if not exists` after the wait missed the schema just committed
  // (SQLSTATE 23505 on pg_namespace), as it did for the runner's three packages.
  it('sixteen connections migrating two folders in turn at once apply each migration once (3 fresh databases)', async () => {
    const other = {
      folder: new URL('../test/fixtures/migrations-other', import.meta.url),
      schema: 'x_kit_other',
      lockKey: 0x6b69746f,
    };
    for (let round = 0; round < 3; round++) {
      const database = await createTestDatabase(server);
      const clients = Array.from({ length: 16 }, () =>
        postgres(database.url, { max: 1, onnotice: () => {} }),
      );
      try {
        const outcomes = await Promise.allSettled(
          clients.map(async (client) => {
            const db = drizzle({ client }) as unknown as StoreDatabase;
            await applyMigrations(db, options);
            await applyMigrations(db, other);
          }),
        );
        expect(
          outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : [])),
        ).toEqual([]);
        const [row] = await clients[0]!`select
          (select count(*)::int from x_kit_test.__migrations) as test,
          (select count(*)::int from x_kit_other.__migrations) as other`;
        expect(row).toEqual({ test: 2, other: 1 });
      } finally {
        await Promise.all(clients.map((client) => client.end({ timeout: 5 })));
        await database.drop();
      }
    }
  });
});
