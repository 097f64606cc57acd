import { AskUserStore, type AuditKey, NotificationOutbox } from '@x/askuser';
import type { ContinuationStore } from '@x/continuation';
import {
  PostgresContinuationStore,
  PostgresRunQueue,
  type PostgresRunQueueOptions,
} from '@x/continuation-postgres';
import { type CommitWith, transaction } from '@x/postgres-kit';
import type { CheckpointStore } from '@x/session';
import { PostgresCheckpointStore } from '@x/session-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { GatedCalls } from './gated-calls.js';
import { OperatorStore } from './operators.js';

/** A drizzle database or transaction handle, on postgres.js or PGlite. */
export type Db = PgDatabase<PgQueryResultHKT, Record<string, unknown>>;

/** Where the runner keeps its state, and the stores over it. */
export interface Storage {
  readonly kind: 'embedded' | 'postgres';
  /** Reached through a transaction-mode pooler (DATABASE_URL `?pgbouncer=true`). */
  readonly pooled?: boolean;
  /** For messages: the data folder, or the server without credentials. */
  readonly where: string;
  readonly db: Db;
  /**
   * Runs `fn` in one transaction of the database; `commitWith(last)` sends COMMIT with the
   * last statements (see `CommitWith` of `@x/postgres-kit`).
   */
  transaction<T>(fn: (tx: Db, commitWith: CommitWith) => Promise<T>): Promise<T>;
  /** Runs `fn`'s reads in one consistent snapshot (a read-only repeatable-read transaction). */
  snapshot<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /**
   * The pause rows of the unattended executive (`paused_states`), writing the audit log in
   * the same transaction when there is an audit key.
   */
  pauses(tx?: Db): AskUserStore;
  /** The operators who sign in to `serve`, and their keys (the runner's own table). */
  operators(tx?: Db): OperatorStore;
  /** Gated calls' recorded results and the demo tools' effects (the runner's own tables). */
  gated(tx?: Db): GatedCalls;
  /** The notification outbox (`@x/askuser`'s), written in the events' transactions. */
  notifications(tx?: Db): NotificationOutbox;
  /** The audit log's signing key (see `resolveAuditKey`), or undefined: no audit log. */
  auditKey(): AuditKey | undefined;
  /** The unattended executive's continuations, in the same database as the pauses. */
  continuations(tx?: Db): ContinuationStore;
  /** The unattended executive's runs, beside its continuations. */
  runs(tx?: Db): PostgresRunQueue;
  /** A chat session's continuations: files under the data folder, or the server. */
  chatContinuations(sessionId: string): ContinuationStore;
  /** Session checkpoints of interactive chats. */
  readonly checkpoints: CheckpointStore;
  /**
   * Session checkpoints of the unattended executive's delegations (parent and workers), in
   * the database, so that they are written in one transaction with the run and the pauses.
   */
  sessions(tx?: Db): CheckpointStore;
  /**
   * Calls `onNotify` whenever one of `channels` is notified (LISTEN/NOTIFY), e.g.
   * `ASKUSER_ANSWERED_CHANNEL`. Undefined where no other process can notify (the embedded
   * default) or notifications cannot arrive (a pooler without RUNNER_LISTEN_URL): poll.
   */
  listen?(channels: readonly string[], onNotify: () => void): Promise<() => Promise<void>>;
  /**
   * The holder key this process's claims name (`ClaimOptions.holder`), so that the runs it
   * leased are claimable at once when it is gone: on PostgreSQL a lock held on a connection
   * of its own (taken on first use); on the embedded default a key of this tenure of the
   * data folder's lock. Undefined behind a pooler without RUNNER_LISTEN_URL: leases expire.
   */
  leaseHolder(): Promise<number | undefined>;
  /**
   * How many connections of this process's pool run a statement now (this call's own not
   * counted), and the pool's size: PostgreSQL reached directly only (PGlite has no pool; a
   * pooler's server connections are not this process's).
   */
  poolUse?(): Promise<{ inUse: number; size: number }>;
  close(): Promise<void>;
}

/** The stores both backings keep in SQL, over one drizzle handle. */
/** The audit key, set once migrations ran (a new key file needs an empty log). */
export interface AuditHolder {
  key?: AuditKey | undefined;
}

export function sqlStores(db: Db, audit: AuditHolder, queueOptions: PostgresRunQueueOptions = {}) {
  // One queue outside transactions: it keeps its prepared statements across calls.
  const queue = new PostgresRunQueue(db, queueOptions);
  return {
    db,
    // BEGIN goes out with the first statement: one round trip less per transaction.
    transaction: <T>(fn: (tx: Db, commitWith: CommitWith) => Promise<T>) => transaction(db, fn),
    snapshot: <T>(fn: (tx: Db) => Promise<T>) =>
      transaction(db, fn, { isolationLevel: 'repeatable read', accessMode: 'read only' }),
    pauses: (tx?: Db) =>
      new AskUserStore(tx ?? db, audit.key === undefined ? {} : { audit: { key: audit.key } }),
    auditKey: () => audit.key,
    operators: (tx?: Db) => new OperatorStore(tx ?? db),
    gated: (tx?: Db) => new GatedCalls(tx ?? db),
    notifications: (tx?: Db) => new NotificationOutbox(tx ?? db),
    continuations: (tx?: Db): ContinuationStore => new PostgresContinuationStore(tx ?? db),
    runs: (tx?: Db) => (tx ? new PostgresRunQueue(tx) : queue),
    sessions: (tx?: Db): CheckpointStore => new PostgresCheckpointStore(tx ?? db),
  };
}
