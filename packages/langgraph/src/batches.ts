import {
  type PreparedRow,
  type PreparedStatement,
  runPrepared,
  sqlStateOf,
  transaction,
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

/** A thread's writes: those waiting, whether a batch is in flight, whether a send is planned. */
interface Thread {
  waiting: Waiting[];
  /** Whether a checkpoint is among the waiting. */
  checkpoint: boolean;
  busy: boolean;
  planned: boolean;
}

/** Whether a write ends a step (a checkpoint) or waits a turn for the one that does. */
export type WriteKind = 'checkpoint' | 'writes';

/**
 * The saver's writes, one transaction in flight per thread: LangGraph sends a step's
 * `putWrites` and its checkpoint without waiting for the ones before, and the writes of a
 * thread sent while its transaction is in flight, or in the turn of the event loop before
 * its checkpoint, go out together in one pipelined transaction (one round trip, one commit
 * to wait for, instead of one each). A checkpoint goes out at once: LangGraph sends the
 * next only once it resolved, so every turn it waits is a turn on the run's critical path;
 * a task's writes wait a turn for their step's checkpoint. Each write is a statement that
 * keeps or replaces what is stored, so a batch that fails (a unique violation or a deadlock
 * with another writer, a dropped connection) is run again write by write, each settling on
 * its own.
 */
export class ThreadWrites {
  readonly #db: LangGraphDatabase;
  /** The threads with a write waiting or in flight. */
  readonly #threads = new Map<string, Thread>();

  constructor(db: LangGraphDatabase) {
    this.#db = db;
  }

  /** Runs `statement` for `thread`, alone or with the thread's writes that wait with it. */
  write(
    thread: string,
    kind: WriteKind,
    statement: PreparedStatement,
    values: Record<string, unknown>,
  ): Promise<PreparedRow[]> {
    // A caller's transaction runs its statements one by one on its connection anyway.
    if (this.#db instanceof PgTransaction) return this.#alone(statement, values);
    let state = this.#threads.get(thread);
    if (state === undefined) {
      state = { waiting: [], checkpoint: false, busy: false, planned: false };
      this.#threads.set(thread, state);
    }
    const waiting = state.waiting;
    const sent = new Promise<PreparedRow[]>((resolve, reject) =>
      waiting.push({ statement, values, resolve, reject }),
    );
    if (kind === 'checkpoint') state.checkpoint = true;
    if (!state.busy) this.#next(thread, state);
    return sent;
  }

  /** Sends what waits at once when a checkpoint is among it, else plans it for the next turn. */
  #next(thread: string, state: Thread): void {
    if (state.checkpoint) this.#send(thread, state);
    else if (state.waiting.length > 0) this.#plan(thread, state);
    else if (!state.planned) this.#threads.delete(thread);
  }

  /** Sends what waits on the next turn, unless a checkpoint takes it along before. */
  #plan(thread: string, state: Thread): void {
    if (state.planned) return;
    state.planned = true;
    setImmediate(() => {
      state.planned = false;
      if (!state.busy) this.#send(thread, state);
    });
  }

  /** Sends what waits for `thread` as one batch, or lets the thread go when nothing does. */
  #send(thread: string, state: Thread): void {
    const batch = state.waiting;
    if (batch.length === 0) {
      if (!state.planned) this.#threads.delete(thread);
      return;
    }
    state.waiting = [];
    state.checkpoint = false;
    state.busy = true;
    void this.#batch(batch).finally(() => {
      state.busy = false;
      // A checkpoint LangGraph sends once this batch resolved comes within the turn and takes
      // along the writes waiting; without it they go on the next turn.
      this.#next(thread, state);
    });
  }

  async #batch(batch: Waiting[]): Promise<void> {
    if (batch.length > 1) {
      try {
        // COMMIT goes out right behind the writes: one round trip; a write that failed turns
        // it into ROLLBACK, which fails the batch.
        const rows = await transaction(this.#db, (tx, commitWith) =>
          commitWith(
            Promise.all(batch.map(({ statement, values }) => runPrepared(tx, statement, values))),
          ),
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
