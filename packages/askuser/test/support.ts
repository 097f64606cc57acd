import { randomBytes } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { type SQL, sql } from 'drizzle-orm';
import type { Logger } from 'drizzle-orm/logger';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import type postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
import {
  type AskUserDatabase,
  AskUserStore,
  type AskUserStoreOptions,
  type InsertPauseParams,
  migrate,
} from '../src/index.js';

/** What {@link describeOnEachStorage} sets up: the open database and a store over it. */
export interface StorageUnderTest {
  target: SqlTarget;
  store: AskUserStore;
  kind: SqlTarget['kind'];
}

/**
 * Registers `title` once per storage (PostgreSQL when a server is there, PGlite): a database
 * opened and migrated once per file, a store over it (with `options`), emptied before each
 * test; the set-up every test file of the package shares.
 */
export async function describeOnEachStorage(
  title: string,
  body: (s: StorageUnderTest) => void,
  options: AskUserStoreOptions & { empty?: (db: AskUserDatabase) => Promise<void> } = {},
): Promise<void> {
  for (const spec of await sqlTargets()) {
    describe.skipIf(spec.skip)(`${title} on ${spec.kind}`, () => {
      const s = { kind: spec.kind } as StorageUnderTest;
      beforeAll(async () => {
        s.target = await spec.open();
        await migrate(s.target.db);
        s.store = new AskUserStore(s.target.db, options);
      });
      afterAll(() => s.target?.close());
      beforeEach(() => (options.empty ?? truncate)(s.target.db));
      body(s);
    });
  }
}

/** Rows of a raw query through drizzle, whatever the driver. */
export async function query(db: AskUserDatabase, q: SQL): Promise<Record<string, unknown>[]> {
  const result: unknown = await db.execute(q);
  if (Array.isArray(result)) return result as Record<string, unknown>[];
  return (result as { rows: Record<string, unknown>[] }).rows;
}

/** A drizzle database over the target's client that records every statement it sends. */
export function loggedDb(target: SqlTarget): {
  db: AskUserDatabase;
  statements: string[];
  params: unknown[][];
} {
  const statements: string[] = [];
  const params: unknown[][] = [];
  const logger: Logger = {
    logQuery: (q, p) => {
      statements.push(q);
      params.push(p);
    },
  };
  const db =
    target.kind === 'postgres'
      ? drizzlePostgres({ client: target.client as postgres.Sql, logger })
      : drizzlePglite({ client: target.client as PGlite, logger });
  return { db, statements, params };
}

/** Waits for the first notification on `channel` whose payload satisfies `want`. */
export async function listenOnce(
  target: SqlTarget,
  channel: string,
  want: (payload: string) => boolean,
): Promise<{ received: Promise<string>; stop: () => Promise<void> }> {
  let resolve!: (payload: string) => void;
  const received = new Promise<string>((r) => {
    resolve = r;
  });
  const onPayload = (payload: string) => {
    if (want(payload)) resolve(payload);
  };
  if (target.kind === 'postgres') {
    const sub = await (target.client as postgres.Sql).listen(channel, onPayload);
    return { received, stop: () => sub.unlisten() };
  }
  const unsubscribe = await (target.client as PGlite).listen(channel, onPayload);
  return { received, stop: () => unsubscribe() };
}

/** A token unique to this run. */
export function uniq(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** A pause with sensible defaults. */
export function pause(token: string, extra: Partial<InsertPauseParams> = {}): InsertPauseParams {
  return {
    token,
    conversationId: 'conv-1',
    kind: 'ask_user',
    question: `question ${token}?`,
    toolCallId: `call-${token}`,
    ...extra,
  };
}

/**
 * Sets a timestamp column of each token to `base + seconds`. Back-to-back writes can share
 * `now()` (PGlite's clock has millisecond resolution), so tests of time order set it.
 */
export async function stamp(
  db: AskUserDatabase,
  column: 'created_at' | 'resumed_at',
  seconds: Record<string, number>,
): Promise<void> {
  for (const [token, offset] of Object.entries(seconds)) {
    await db.execute(
      sql`update aura.paused_states set ${sql.identifier(column)} = timestamptz '2026-01-01T00:00:00Z' + make_interval(secs => ${offset}) where token = ${token}`,
    );
  }
}

/** Empties the table and the audit log between tests of the audit log. */
export async function emptyAll(db: AskUserDatabase): Promise<void> {
  for (const table of ['paused_states', 'audit_entries', 'audit_heads', 'audit_sealed']) {
    await db.execute(sql`delete from ${sql.identifier('aura')}.${sql.identifier(table)}`);
  }
}

/** Empties the table between tests (each file has its own database). */
export async function truncate(db: AskUserDatabase): Promise<void> {
  await db.execute(sql`delete from aura.paused_states`);
}

/** Polls until `count` sessions of this database wait on a lock (bounded, then throws). */
export async function waitForLockWaiters(db: AskUserDatabase, count: number): Promise<number[]> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const rows = await query(
      db,
      sql`select pid from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' order by pid`,
    );
    if (rows.length >= count) return rows.map((r) => Number(r.pid));
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`fewer than ${count} sessions ever waited on a lock`);
}
