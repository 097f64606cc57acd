import { AskUserStore, type AuditKey, NotificationOutbox } from '@x/askuser';
import type { ContinuationStore } from '@x/continuation';
import {
  PostgresContinuationStore,
  PostgresRunQueue,
  type PostgresRunQueueOptions,
  randomHolderKey,
} from '@x/continuation-postgres';
import { type CommitWith, prepareOnce, runPrepared, transaction } from '@x/postgres-kit';
import type { CheckpointStore } from '@x/session';
import { PostgresCheckpointStore } from '@x/session-postgres';
import { sql } from 'drizzle-orm';
import { PostgresGatedResults } from './gated-results.js';
import type { ExecutiveDatabase as Db, ExecutiveStorage } from './storage.js';

/** {@link lockFor}'s statement, compiled once per process: a pipelined transaction runs it too. */
export const lockForStatement = prepareOnce(
  () => sql`select pg_advisory_xact_lock(hashtext(${sql.placeholder('key')}))`,
);

/**
 * Takes a transaction-scoped advisory lock named `key` (released at commit or rollback), so
 * that two transactions about the same thing run one after the other. No table is read.
 */
export async function lockFor(tx: Db, key: string): Promise<void> {
  await runPrepared(tx, lockForStatement, { key });
}

/** Options of {@link sqlExecutiveStorage}. */
export interface SqlExecutiveStorageOptions {
  /** The audit log's signing key, read at each use (it may be set once migrations ran); default none. */
  auditKey?: () => AuditKey | undefined;
  /** Options of the run queue (e.g. `synchronousClaim` on PGlite, which has no WAL writer). */
  queue?: PostgresRunQueueOptions;
  /** The holder key claims name; default one random key for this storage's life. */
  leaseHolder?: () => Promise<number | undefined>;
  /** LISTEN/NOTIFY, where the client can hold a session for it; default none (the worker polls). */
  listen?: ExecutiveStorage['listen'];
}

/**
 * The executive's storage in SQL over one drizzle handle, postgres.js or PGlite: the
 * questions and outbox of `@x/askuser`, the continuations and runs of
 * `@x/continuation-postgres`, the checkpoints of `@x/session-postgres` and the executive's
 * own gated results. Run each package's `migrate` (this one's too) before using it.
 *
 * @example
 * const db = drizzle({ client: postgres(process.env.DATABASE_URL!) });
 * await Promise.all([askuserMigrate(db), continuationMigrate(db), sessionMigrate(db)]);
 * await migrate(db);
 * const storage = sqlExecutiveStorage(db);
 * const ready = await storage.runs().list({ status: 'ready' });
 */
export function sqlExecutiveStorage(
  db: Db,
  options: SqlExecutiveStorageOptions = {},
): ExecutiveStorage<Db> {
  const { auditKey = () => undefined } = options;
  // One queue outside transactions: it keeps its prepared statements across calls.
  const queue = new PostgresRunQueue(db, options.queue ?? {});
  const holder = options.leaseHolder === undefined ? randomHolderKey() : undefined;
  return {
    db,
    // BEGIN goes out with the first statement: one round trip less per transaction.
    transaction: <T>(fn: (tx: Db, commitWith: CommitWith) => Promise<T>) => transaction(db, fn),
    snapshot: <T>(fn: (tx: Db) => Promise<T>) =>
      transaction(db, fn, { isolationLevel: 'repeatable read', accessMode: 'read only' }),
    lockFor,
    pauses: (tx?: Db) => {
      const key = auditKey();
      return new AskUserStore(tx ?? db, key === undefined ? {} : { audit: { key } });
    },
    auditKey,
    continuations: (tx?: Db): ContinuationStore => new PostgresContinuationStore(tx ?? db),
    runs: (tx?: Db) => (tx ? new PostgresRunQueue(tx) : queue),
    sessions: (tx?: Db): CheckpointStore => new PostgresCheckpointStore(tx ?? db),
    gatedResults: (tx?: Db) => new PostgresGatedResults(tx ?? db),
    notifications: (tx?: Db) => new NotificationOutbox(tx ?? db),
    leaseHolder: options.leaseHolder ?? (async () => holder),
    ...(options.listen ? { listen: options.listen } : {}),
  };
}
