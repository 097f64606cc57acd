import {
  createTestDatabase,
  refusedMigration,
  type SqlTarget,
  sqlTargets,
} from '@internal/pg-test';
import { SessionError } from '@x/session';
import { describeCheckpointStore, sampleCheckpoint } from '@x/session/testing';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkpoints,
  MIGRATIONS_SCHEMA,
  MIGRATIONS_TABLE,
  migrate,
  PostgresCheckpointStore,
} from '../src/index.js';

// Clients of a port nothing listens on: every call of a store over one fails. A fresh one
// each time, as postgres.js waits longer before each reconnect of the same client.
const deadClients: postgres.Sql[] = [];
function deadDb(): PgDatabase<PgQueryResultHKT> {
  const client = postgres('postgres://postgres@127.0.0.1:1/none', { max: 1, onnotice: () => {} });
  deadClients.push(client);
  return drizzle({ client }) as unknown as PgDatabase<PgQueryResultHKT>;
}
afterAll(() => Promise.all(deadClients.map((c) => c.end({ timeout: 1 }))));

/**
 * Registers the store tests on one SQL target kind. Split per kind into two test files so
 * vitest runs PGlite and the server in parallel.
 */
export async function describeStoreOn(kind: SqlTarget['kind']): Promise<void> {
  for (const spec of (await sqlTargets()).filter((t) => t.kind === kind)) {
    describe.skipIf(spec.skip)(spec.kind, () => {
      let target: SqlTarget;
      let peerClient: postgres.Sql | undefined;
      let peerDb: PgDatabase<PgQueryResultHKT> | undefined;
      beforeAll(async () => {
        target = await spec.open();
        await migrate(target.db);
        if (target.url !== undefined) {
          // A second connection pool, as a second host would have.
          peerClient = postgres(target.url, { onnotice: () => {} });
          peerDb = drizzle({ client: peerClient }) as unknown as PgDatabase<PgQueryResultHKT>;
        }
      });
      afterAll(async () => {
        await peerClient?.end({ timeout: 5 });
        await target?.close();
      });

      describeCheckpointStore({
        name: `PostgresCheckpointStore (${spec.kind})`,
        async create() {
          await target.db.delete(checkpoints);
          return new PostgresCheckpointStore(target.db);
        },
        // A second instance: over its own pool on the server, over the same handle on PGlite.
        peer: () => new PostgresCheckpointStore(peerDb ?? target.db),
        failing: () => new PostgresCheckpointStore(deadDb()),
        // PGlite is one process's database.
        processes:
          spec.kind === 'postgres'
            ? {
                module: new URL('./fixtures/postgres-store.mjs', import.meta.url),
                args: () => ({ url: target.url }),
              }
            : null,
      });

      describe('migrate and transactions', () => {
        it('migrate is idempotent and records itself in its own table', async () => {
          await migrate(target.db);
          await migrate(target.db);
          const applied = await target.db.execute(
            sql`select count(*)::int as n from ${sql.identifier(MIGRATIONS_SCHEMA)}.${sql.identifier(MIGRATIONS_TABLE)}`,
          );
          const rows = Array.isArray(applied)
            ? applied
            : (applied as unknown as { rows: unknown[] }).rows;
          expect(rows).toEqual([{ n: 1 }]);
        });

        it("a migration the server refuses is unavailable, naming the package, the migration and the server's message", async () => {
          const error = await refusedMigration(target.db, migrate, 'x_session.__migrations');
          expect(SessionError.hasCode(error, 'unavailable')).toBe(true);
          expect(error).toMatchObject({
            details: { sqlState: '42P07' },
            message:
              '[@x/session] migrating @x/session-postgres failed: migration 0000_checkpoints (drizzle/0000_checkpoints.sql): relation "checkpoints" already exists (SQLSTATE 42P07)',
          });
        });

        // PGlite has one connection: concurrent hosts exist only on the server.
        if (spec.kind === 'postgres') {
          it('several hosts migrating a fresh database at once apply it once', async () => {
            const fresh = await createTestDatabase();
            const clients = Array.from({ length: 4 }, () =>
              postgres(fresh.url, { max: 1, onnotice: () => {} }),
            );
            try {
              await Promise.all(
                clients.map((client) =>
                  migrate(drizzle({ client }) as unknown as PgDatabase<PgQueryResultHKT>),
                ),
              );
              const [row] =
                await clients[0]!`select count(*)::int as n from x_session.__migrations`;
              expect(row?.n).toBe(1);
              const store = new PostgresCheckpointStore(
                drizzle({ client: clients[1]! }) as unknown as PgDatabase<PgQueryResultHKT>,
              );
              expect(await store.put('t', sampleCheckpoint(1))).toBe(1);
            } finally {
              await Promise.all(clients.map((client) => client.end({ timeout: 5 })));
              await fresh.drop();
            }
          });
        }

        it('writes inside the caller transaction: a rollback leaves nothing', async () => {
          await target.db.delete(checkpoints);
          await expect(
            target.db.transaction(async (tx) => {
              await new PostgresCheckpointStore(tx).put('in-tx', sampleCheckpoint(1));
              expect(await new PostgresCheckpointStore(tx).get('in-tx')).toBeDefined();
              throw new Error('roll back');
            }),
          ).rejects.toThrow('roll back');
          expect(await new PostgresCheckpointStore(target.db).get('in-tx')).toBeUndefined();
        });

        it('refuses a stored checkpoint of a newer version on read', async () => {
          await target.db.delete(checkpoints);
          await target.db.insert(checkpoints).values({
            threadId: 'future',
            revision: 1,
            version: 2,
            checkpoint: JSON.stringify({ ...sampleCheckpoint(1), version: 2 }),
          });
          const error = await new PostgresCheckpointStore(target.db)
            .get('future')
            .catch((e: unknown) => e);
          expect(SessionError.hasCode(error, 'unsupported_version')).toBe(true);
        });

        it('a missing table is unavailable (run migrate), classified by SQLSTATE with the cause kept', async () => {
          await target.db.execute(sql`alter table ${checkpoints} rename to checkpoints_moved`);
          try {
            const error = await new PostgresCheckpointStore(target.db)
              .get('x')
              .catch((e: unknown) => e);
            expect(SessionError.hasCode(error, 'unavailable')).toBe(true);
            expect((error as Error).message).toContain('run migrate(db)');
            expect((error as Error).cause).toBeDefined();
          } finally {
            await target.db.execute(
              sql`alter table x_session.checkpoints_moved rename to checkpoints`,
            );
          }
        });
      });
    });
  }
}
