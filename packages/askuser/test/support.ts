import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { applyMigrations, runPrepared } from '@x/postgres-kit';
import { type SQL, sql } from 'drizzle-orm';
import type { Logger } from 'drizzle-orm/logger';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import type postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
import {
  conversationChain,
  headOf,
  keyBytes,
  lockHead,
  type NewEntry,
  signedEntries,
} from '../src/audit-chain.js';
import {
  type AskUserDatabase,
  AskUserStore,
  type AskUserStoreOptions,
  type InsertPauseParams,
  MIGRATIONS_SCHEMA,
  migrate,
  type ResumeAnswer,
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

const drizzleFolder = fileURLToPath(new URL('../drizzle', import.meta.url));

/**
 * Migrates `db` as the release whose last migration was `tag` did (the package's migrations up
 * to it, under the package's lock key and table), so a test can write what that release wrote.
 */
export async function migrateUpTo(db: AskUserDatabase, tag: string): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'askuser-migrations-'));
  try {
    const folder = path.join(dir, 'drizzle');
    cpSync(drizzleFolder, folder, { recursive: true });
    const journalFile = path.join(folder, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
    journal.entries = journal.entries.slice(0, journal.entries.findIndex((e) => e.tag === tag) + 1);
    writeFileSync(journalFile, JSON.stringify(journal));
    await applyMigrations(db, { folder, schema: MIGRATIONS_SCHEMA, lockKey: 0x61736b75 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Inserts a pause as a writer that leaves the rest to the triggers does (a release before 0009,
 * or direct SQL), with its `question-created` entry when given a key (see {@link appendAsBefore}).
 */
export async function insertAsBefore(
  db: AskUserDatabase,
  key: string | undefined,
  p: { token: string; conversationId: string; names?: string[]; roles?: string[] },
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`insert into aura.paused_states
        (token, conversation_id, kind, question, tool_call_id, audience_names, audience_roles)
      values (${p.token}, ${p.conversationId}, 'ask_user', 'go?', ${`call-${p.token}`},
        array(select jsonb_array_elements_text(${JSON.stringify(p.names ?? [])}::jsonb)),
        array(select jsonb_array_elements_text(${JSON.stringify(p.roles ?? [])}::jsonb)))`);
    if (key === undefined) return;
    await appendAsBefore(tx, key, {
      chain: conversationChain(p.conversationId),
      kind: 'question-created',
      token: p.token,
      data: { token: p.token, conversationId: p.conversationId },
    });
  });
}

/** Answers a pause as {@link insertAsBefore}'s writer does: one UPDATE, its entry with a key. */
export async function answerAsBefore(
  db: AskUserDatabase,
  key: string | undefined,
  token: string,
  answer: ResumeAnswer,
  by: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    const rows = await query(
      tx,
      sql`update aura.paused_states set resumed_at = now(), resumed_answer = ${JSON.stringify(answer)}::jsonb,
        answered_by = ${by} where token = ${token} and resumed_at is null returning conversation_id`,
    );
    if (key === undefined || rows[0] === undefined) return;
    await appendAsBefore(tx, key, {
      chain: conversationChain(String(rows[0].conversation_id)),
      kind: 'question-answered',
      token,
      data: { token, action: answer.action, content: answer.content, by },
    });
  });
}

/**
 * Appends one audit entry in `tx` as a release before 0010 did: the chain's head locked, the
 * entry signed, and a plain INSERT that leaves moving the head to the trigger.
 */
export async function appendAsBefore(
  tx: AskUserDatabase,
  key: string,
  entry: NewEntry,
): Promise<void> {
  const [head] = await runPrepared(tx, lockHead, { chain: entry.chain });
  const [e] = signedEntries(keyBytes(key), headOf(head), [entry]);
  if (e === undefined) return;
  await tx.execute(sql`insert into aura.audit_entries (chain, seq, kind, at, token, body, prev, hash, sig)
    values (${e.chain}, ${e.seq}, ${e.kind}, ${e.at}::timestamptz, ${e.token}, ${e.body}, ${e.prev}, ${e.hash}, ${e.sig})`);
}
