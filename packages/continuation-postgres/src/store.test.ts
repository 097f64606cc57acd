import { refusedMigration, type SqlTarget, sqlTargets } from '@internal/pg-test';
import { ContinuationError } from '@x/continuation';
import { describeContinuationStore, sampleSuspension } from '@x/continuation/testing';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ContinuationDatabase,
  MIGRATIONS_SCHEMA,
  MIGRATIONS_TABLE,
  migrate,
  PostgresContinuationStore,
  suspensions,
} from './index.js';

function rows(result: unknown): Record<string, unknown>[] {
  return Array.isArray(result)
    ? result
    : ((result as { rows: Record<string, unknown>[] }).rows ?? []);
}

// Clients of a port nothing listens on: every call of a store over one fails. A fresh one
// each time, as postgres.js waits longer before each reconnect of the same client.
const deadClients: postgres.Sql[] = [];
function deadClient(): postgres.Sql {
  const client = postgres('postgres://postgres@127.0.0.1:1/none', { max: 1, onnotice: () => {} });
  deadClients.push(client);
  return client;
}
afterAll(() => Promise.all(deadClients.map((c) => c.end({ timeout: 1 }))));

for (const t of await sqlTargets()) {
  describe.skipIf(t.skip)(t.kind, () => {
    let target: SqlTarget;
    let db: ContinuationDatabase;
    // The peer reaches the same data through a pool of its own on the server (PGlite has one connection).
    let peerClient: postgres.Sql | undefined;
    let peerDb: ContinuationDatabase;
    beforeAll(async () => {
      target = await t.open();
      db = target.db;
      await migrate(db);
      peerClient =
        target.url === undefined ? undefined : postgres(target.url, { onnotice: () => {} });
      peerDb = peerClient === undefined ? db : drizzle({ client: peerClient });
    });
    afterAll(async () => {
      await peerClient?.end({ timeout: 5 });
      await target?.close();
    });

    describeContinuationStore({
      name: `PostgresContinuationStore (${t.kind})`,
      create: () => new PostgresContinuationStore(db),
      peer: () => new PostgresContinuationStore(peerDb),
      failing: () => new PostgresContinuationStore(drizzle({ client: deadClient() })),
      // PGlite is one process's database.
      processes:
        t.kind === 'postgres'
          ? {
              module: new URL('../test/fixtures/postgres-store.mjs', import.meta.url),
              args: () => ({ url: target.url }),
            }
          : null,
      writeRaw: async (_store, id, record) => {
        await db.insert(suspensions).values({
          interactionId: id,
          record: JSON.stringify(record),
          createdAt: new Date(),
        });
      },
    });

    describe('migrate', () => {
      it('is idempotent and records itself in its own schema and table', async () => {
        await migrate(db);
        await migrate(db);
        const applied = rows(
          await db.execute(
            sql`select count(*)::int as n from ${sql.identifier(MIGRATIONS_SCHEMA)}.${sql.identifier(MIGRATIONS_TABLE)}`,
          ),
        );
        // One row per migration file: the suspensions, the runs, the runs' lease holder, their
        // deadline, the run queue, its repair.
        expect(applied[0]?.n).toBe(6);
        const drizzleDefault = rows(
          await db.execute(sql`select to_regclass('drizzle.__drizzle_migrations')::text as t`),
        );
        expect(drizzleDefault[0]?.t ?? null).toBeNull();
      });

      it("a migration the server refuses is unavailable, naming the package, the migration and the server's message", async () => {
        const error = await refusedMigration(db, migrate, 'x_continuation.__migrations');
        expect(ContinuationError.hasCode(error, 'unavailable')).toBe(true);
        expect(error).toMatchObject({
          sqlState: '42P07',
          message:
            '[@x/continuation] migrating @x/continuation-postgres failed: migration 0000_suspensions (drizzle/0000_suspensions.sql): relation "suspensions" already exists (SQLSTATE 42P07)',
        });
      });
    });

    describe('PostgresContinuationStore', () => {
      it('stores the same snake_case JSON as the file store, with the row columns beside it', async () => {
        const s = sampleSuspension({ sessionId: 'sess-1', runId: 'run-1' });
        await new PostgresContinuationStore(db).save(s);
        const [row] = await db
          .select()
          .from(suspensions)
          .where(sql`${suspensions.interactionId} = ${s.interactionId}`);
        expect(row).toMatchObject({ sessionId: 'sess-1', runId: 'run-1', resolved: false });
        expect(JSON.parse(row?.record ?? '{}')).toMatchObject({
          version: 1,
          interaction_id: s.interactionId,
          tool_use_id: s.toolUseId,
          created_at: s.createdAt.toISOString(),
        });
      });

      it('works inside a transaction handle: a rolled-back save leaves nothing', async () => {
        const s = sampleSuspension();
        await db
          .transaction(async (tx) => {
            const store = new PostgresContinuationStore(tx);
            await store.save(s);
            expect(await store.load(s.interactionId)).toEqual(s);
            tx.rollback();
          })
          .catch(() => {});
        await expect(new PostgresContinuationStore(db).load(s.interactionId)).rejects.toMatchObject(
          {
            code: 'not_found',
          },
        );
      });

      it('a missing table is unavailable with the SQLSTATE cause kept and a hint to migrate', async () => {
        let err: unknown;
        await db
          .transaction(async (tx) => {
            await tx.execute(sql`alter schema x_continuation rename to x_continuation_hidden`);
            err = await new PostgresContinuationStore(tx).load('any').catch((e: unknown) => e);
            tx.rollback();
          })
          .catch(() => {});
        expect(ContinuationError.is(err) && err.code).toBe('unavailable');
        expect((err as Error).message).toContain('migrate(db)');
        expect((err as Error).cause).toBeDefined();
      });

      it('a row whose record is not JSON is invalid', async () => {
        const id = `bad-${Date.now()}`;
        await db
          .insert(suspensions)
          .values({ interactionId: id, record: '{"version":1', createdAt: new Date() });
        await expect(new PostgresContinuationStore(db).load(id)).rejects.toMatchObject({
          code: 'invalid',
          field: '(record)',
        });
      });
    });
  });
}
