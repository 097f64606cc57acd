const marker = Symbol.for('@x/postgres-kit.MigrationError');

/** Options of {@link MigrationError}. */
export interface MigrationErrorOptions {
  /** The failing migration's tag (`0001_runs`); undefined while setting up the migrations table. */
  migration?: string;
  /** The SQLSTATE the server reported, e.g. `42P07` (relation already exists). */
  sqlState?: string;
  /** The driver error. */
  cause: unknown;
}

/**
 * What `applyMigrations` throws when the server refuses one of its statements: which
 * migration (or the migrations table's set-up) failed, with the server's message and its
 * SQLSTATE. A store package wraps it in its own error class; `reason` ends that message.
 *
 * @example
 * try {
 *   await applyMigrations(db, options);
 * } catch (err) {
 *   if (MigrationError.is(err)) console.error(`migrate failed: ${err.reason}`);
 *   throw err;
 * }
 */
export class MigrationError extends Error {
  readonly [marker] = true;
  override readonly name = 'MigrationError';
  readonly code = 'migration_failed' as const;
  /** The failing migration's tag; undefined while setting up the migrations table. */
  readonly migration: string | undefined;
  /** The SQLSTATE the server reported, when it gave one. */
  readonly sqlState: string | undefined;
  /**
   * What failed and the server's words, to end a sentence, e.g. `migration 0001_runs
   * (drizzle/0001_runs.sql): relation "runs" already exists (SQLSTATE 42P07)`.
   */
  readonly reason: string;

  constructor(reason: string, options: MigrationErrorOptions) {
    super(`[@x/postgres-kit] migrate failed: ${reason}`, { cause: options.cause });
    this.reason = reason;
    this.migration = options.migration;
    this.sqlState = options.sqlState;
  }

  /** True for a `MigrationError`, also one thrown by another installed copy of this package. */
  static is(error: unknown): error is MigrationError {
    return typeof error === 'object' && error !== null && marker in error;
  }
}
