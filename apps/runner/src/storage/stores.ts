import type { AuditKey } from '@x/askuser';
import type { ContinuationStore } from '@x/continuation';
import type { PostgresRunQueueOptions } from '@x/continuation-postgres';
import { type ExecutiveDatabase, type ExecutiveStorage, sqlExecutiveStorage } from '@x/executive';
import type { CheckpointStore } from '@x/session';
import { OperatorStore } from './operators.js';
import { ToolEffects } from './tool-effects.js';

/** A drizzle database or transaction handle, on postgres.js or PGlite. */
export type Db = ExecutiveDatabase;

/**
 * Where the runner keeps its state: the executive's storage port (the runs, questions,
 * continuations, checkpoints, gated results and outbox of the unattended flows) and the
 * runner's own stores beside it.
 */
export interface Storage extends ExecutiveStorage<Db> {
  readonly kind: 'embedded' | 'postgres';
  /** Reached through a transaction-mode pooler (DATABASE_URL `?pgbouncer=true`). */
  readonly pooled?: boolean;
  /** For messages: the data folder, or the server without credentials. */
  readonly where: string;
  /** The operators who sign in to `serve`, and their keys (the runner's own table). */
  operators(tx?: Db): OperatorStore;
  /** The demo tools' effects (the runner's own table), the effect log of its gated tools. */
  effects(tx?: Db): ToolEffects;
  /** A chat session's continuations: files under the data folder, or the server. */
  chatContinuations(sessionId: string): ContinuationStore;
  /** Session checkpoints of interactive chats. */
  readonly checkpoints: CheckpointStore;
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

/** The audit key, set once migrations ran (a new key file needs an empty log). */
export interface AuditHolder {
  key?: AuditKey | undefined;
}

/** The stores both backings keep in SQL, over one drizzle handle. */
export function sqlStores(db: Db, audit: AuditHolder, queueOptions: PostgresRunQueueOptions = {}) {
  return {
    ...sqlExecutiveStorage(db, { auditKey: () => audit.key, queue: queueOptions }),
    operators: (tx?: Db) => new OperatorStore(tx ?? db),
    effects: (tx?: Db) => new ToolEffects(tx ?? db),
  };
}
