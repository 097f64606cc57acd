import type { AskUserStore, AuditKey, NotificationOutbox } from '@x/askuser';
import type { ContinuationStore } from '@x/continuation';
import type { PostgresRunQueue } from '@x/continuation-postgres';
import type { CommitWith, StoreDatabase } from '@x/postgres-kit';
import type { CheckpointStore } from '@x/session';
import type { GatedResults } from './gated-call.js';

/** A drizzle database or transaction handle, on postgres.js or PGlite. */
export type ExecutiveDatabase = StoreDatabase;

/**
 * What the executive's flows keep and where: the narrow storage port. Each store is taken
 * over `tx` when given, so that a flow writes the run, its questions, its continuation, its
 * checkpoints and its notifications in one transaction. Operators, chat sessions and the
 * delivery of notifications are not part of it. {@link sqlExecutiveStorage} implements it
 * over one drizzle handle (postgres.js or PGlite).
 */
export interface ExecutiveStorage<Tx = ExecutiveDatabase> {
  /** The handle outside any transaction (a pipelined transaction starts from it). */
  readonly db: Tx;
  /**
   * Runs `fn` in one transaction; `commitWith(last)` sends COMMIT with the last statements
   * (see `CommitWith` of `@x/postgres-kit`).
   */
  transaction<T>(fn: (tx: Tx, commitWith: CommitWith) => Promise<T>): Promise<T>;
  /** Runs `fn`'s reads in one consistent snapshot (a read-only repeatable-read transaction). */
  snapshot<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Takes a transaction-scoped lock named `key` inside `tx` (released at commit or rollback),
   * so that two transactions about the same thing run one after the other.
   */
  lockFor(tx: Tx, key: string): Promise<void>;
  /** The questions (`@x/askuser`'s pauses), writing the audit log when there is a key. */
  pauses(tx?: Tx): AskUserStore;
  /** The audit log's signing key, or undefined: no audit log is written. */
  auditKey(): AuditKey | undefined;
  /** The suspended turns (`@x/continuation`), in the same database as the questions. */
  continuations(tx?: Tx): ContinuationStore;
  /** The runs and their queue, beside the continuations. */
  runs(tx?: Tx): PostgresRunQueue;
  /** The session checkpoints of delegations (parent and workers). */
  sessions(tx?: Tx): CheckpointStore;
  /** The recorded results of approved gated calls. */
  gatedResults(tx?: Tx): GatedResults;
  /** The notification outbox the events are written to, in their own transactions. */
  notifications(tx?: Tx): NotificationOutbox;
  /**
   * Calls `onNotify` whenever one of `channels` is notified (LISTEN/NOTIFY). Undefined where
   * no other process can notify, or notifications cannot arrive: the worker polls.
   */
  listen?(channels: readonly string[], onNotify: () => void): Promise<() => Promise<void>>;
  /**
   * The holder key this process's claims name (`ClaimOptions.holder` of
   * `@x/continuation-postgres`), or undefined: leases of a process that is gone expire.
   */
  leaseHolder(): Promise<number | undefined>;
}
