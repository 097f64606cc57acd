import {
  type PreparedRow,
  type PreparedStatement,
  pipelinedTransaction,
  runPrepared,
  sqlStateOf,
} from '@x/postgres-kit';
import { PgTransaction } from 'drizzle-orm/pg-core';
import type { LangGraphDatabase } from './database.js';

/** A write waiting for its thread's write in flight. */
interface Waiting {
  statement: PreparedStatement;
  values: Record<string, unknown>;
  resolve(rows: PreparedRow[]): void;
  reject(error: unknown): void;
}

/**
 * The saver's writes, one transaction in flight per thread: LangGraph sends a step's
 * `putWrites` and the next `put` without waiting for the ones before, and the writes of a
 * thread sent in one turn of the event loop, or while its transaction is in flight, go out
 * together on the next turn or behind it, in one pipelined transaction (one round trip, one
 * commit to wait for, instead of one each). Each write is a statement that keeps
 * or replaces what is stored, so a batch that fails (a unique violation or a deadlock with
 * another writer, a dropped connection) is run again write by write, each settling on its
 * own.
 */
export class ThreadWrites {
  readonly #db: LangGraphDatabase;
  /** The writes waiting per thread; a thread is a key while one of its writes is in flight. */
  readonly #waiting = new Map<string, Waiting[]>();

  constructor(db: LangGraphDatabase) {
    this.#db = db;
  }

  /** Runs `statement` for `thread`, alone or with the thread's writes that wait with it. */
  write(
    thread: string,
    statement: PreparedStatement,
    values: Record<string, unknown>,
  ): Promise<PreparedRow[]> {
    // A caller's transaction runs its statements one by one on its connection anyway.
    if (this.#db instanceof PgTransaction) return this.#alone(statement, values);
    let waiting = this.#waiting.get(thread);
    if (waiting === undefined) {
      waiting = [];
      this.#waiting.set(thread, waiting);
      // LangGraph sends a task's writes and the next checkpoint in one turn of the event
      // loop: sent on the next turn, they share a transaction.
      setImmediate(() => this.#next(thread));
    }
    const batch = waiting;
    return new Promise((resolve, reject) => batch.push({ statement, values, resolve, reject }));
  }

  /** Sends what waits for `thread` as one batch, or lets the thread go when nothing does. */
  #next(thread: string): void {
    const batch = this.#waiting.get(thread) ?? [];
    if (batch.length === 0) {
      this.#waiting.delete(thread);
      return;
    }
    this.#waiting.set(thread, []);
    void this.#batch(batch).finally(() => this.#next(thread));
  }

  async #batch(batch: Waiting[]): Promise<void> {
    if (batch.length > 1) {
      try {
        const rows = await pipelinedTransaction(this.#db, (tx) =>
          Promise.all(batch.map(({ statement, values }) => tx.run(statement, values))),
        );
        batch.forEach((write, i) => {
          write.resolve(rows[i] ?? []);
        });
        return;
      } catch {
        // Run again write by write below: each then fails or succeeds on its own.
      }
    }
    await Promise.all(
      batch.map(({ statement, values, resolve, reject }) =>
        this.#alone(statement, values).then(resolve, reject),
      ),
    );
  }

  /**
   * Runs a write, once more when it lost a race to insert the same row (`23505`): run again,
   * it keeps or replaces what the other writer stored, as the statement says.
   */
  async #alone(statement: PreparedStatement, values: Record<string, unknown>) {
    try {
      return await runPrepared(this.#db, statement, values);
    } catch (error) {
      if (sqlStateOf(error) !== '23505') throw error;
      return await runPrepared(this.#db, statement, values);
    }
  }
}
