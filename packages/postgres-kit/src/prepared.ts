import { fillPlaceholders, type SQL } from 'drizzle-orm';
import { PgDialect, PgTransaction } from 'drizzle-orm/pg-core';
import { isConnectionDrop } from './connection.js';
import type { StoreDatabase } from './database.js';

/** A row as the driver returns it, keyed by the statement's column names. */
export type PreparedRow = Record<string, unknown>;

/**
 * A statement whose SQL text is compiled once per process, on first use, and then run on
 * whichever handle is given: building a drizzle query costs more than running it, and a
 * store made per transaction would build it again every time.
 */
export interface PreparedStatement {
  /** The SQL text, with `$1`… for its placeholders. */
  readonly text: string;
  /** The positional parameters, filled from the named values. */
  parameters(values: Record<string, unknown>): unknown[];
}

/**
 * A statement compiled from `build` (an `sql` template with `sql.placeholder(name)`s) on
 * its first use, once per process; run it with {@link runPrepared} or a pipeline's `run`.
 *
 * @example
 * const load = prepareOnce(() => sql`select body from t where id = ${sql.placeholder('id')}`);
 * const [row] = await runPrepared(db, load, { id });
 */
export function prepareOnce(build: () => SQL): PreparedStatement {
  let compiled: { sql: string; params: unknown[] } | undefined;
  const query = () => {
    compiled ??= new PgDialect().sqlToQuery(build());
    return compiled;
  };
  return {
    get text() {
      return query().sql;
    },
    parameters: (values) => fillPlaceholders(query().params, values),
  };
}

// The driver objects behind a drizzle handle (`session.client`), as far as they are used here.
interface PendingQuery extends Promise<PreparedRow[]> {
  execute(): unknown;
}
interface PostgresJsClient {
  unsafe(text: string, parameters?: unknown[], options?: { prepare?: boolean }): PendingQuery;
  reserve?: () => Promise<PostgresJsClient & { release(): void }>;
}
interface PgliteClient {
  query(text: string, parameters?: unknown[]): Promise<{ rows: PreparedRow[] }>;
}
type DriverClient = PostgresJsClient | PgliteClient;

/** The driver client of a drizzle postgres.js or PGlite handle (a transaction's own). */
function clientOf(db: StoreDatabase): DriverClient {
  const client = (db as unknown as { session?: { client?: unknown } }).session?.client;
  if (typeof client === 'function' || (typeof client === 'object' && client !== null)) {
    if (typeof (client as PostgresJsClient).unsafe === 'function')
      return client as PostgresJsClient;
    if (typeof (client as PgliteClient).query === 'function') return client as PgliteClient;
  }
  throw new TypeError('expected a drizzle postgres.js or PGlite database or transaction');
}

function isPostgresJs(client: DriverClient): client is PostgresJsClient {
  return typeof (client as PostgresJsClient).unsafe === 'function';
}

/** Sends a statement now (postgres.js queries are lazy) as a named prepared statement. */
function send(client: DriverClient, text: string, parameters: unknown[]): Promise<PreparedRow[]> {
  if (!isPostgresJs(client)) return client.query(text, parameters).then((result) => result.rows);
  const query = client.unsafe(text, parameters, { prepare: true });
  query.execute();
  return query;
}

/**
 * Runs a prepared statement on `db`'s own connection (a transaction's, when `db` is one);
 * postgres.js prepares it once per connection, and a client made with `prepare: false` wins.
 * Rows come as the driver parses them: cast what differs (timestamps, arrays) in the SQL.
 */
export function runPrepared(
  db: StoreDatabase,
  statement: PreparedStatement,
  values: Record<string, unknown>,
): Promise<PreparedRow[]> {
  return send(clientOf(db), statement.text, statement.parameters(values));
}

/** The statements of one {@link pipelinedTransaction}. */
export interface Pipeline {
  /**
   * Sends a prepared statement of the transaction. On a postgres.js pool it goes out at
   * once, behind those before it, so statements that do not wait for each other share a
   * round trip; a statement not awaited still counts: the transaction commits only if it
   * succeeded.
   */
  run(statement: PreparedStatement, values: Record<string, unknown>): Promise<PreparedRow[]>;
}

/**
 * Runs `work` in one transaction. On a postgres.js database (not a transaction) it runs on
 * one reserved connection with BEGIN sent together with the first statement and COMMIT
 * right behind the last, so a transaction of two dependent steps takes two round trips, not
 * four. Inside a caller's transaction it runs there (committed with it); on PGlite in a
 * transaction of its own. Commits only if `work` and every statement it ran succeeded.
 *
 * @example
 * const entry = await pipelinedTransaction(db, async (tx) => {
 *   const [row] = await tx.run(answer, { token });
 *   void tx.run(append, entryOf(row)); // goes out with COMMIT
 *   return row;
 * });
 */
export async function pipelinedTransaction<T>(
  db: StoreDatabase,
  work: (tx: Pipeline) => Promise<T>,
): Promise<T> {
  const client = clientOf(db);
  if (db instanceof PgTransaction || !isPostgresJs(client) || client.reserve === undefined) {
    const inside = async (tx: StoreDatabase) => {
      const sent: Promise<unknown>[] = [];
      const result = await work({
        run: (statement, values) => {
          const rows = runPrepared(tx, statement, values);
          sent.push(rows);
          rows.catch(() => {});
          return rows;
        },
      });
      await settled(sent);
      return result;
    };
    return db instanceof PgTransaction ? inside(db) : db.transaction(inside);
  }
  const connection = await client.reserve();
  const sent: Promise<unknown>[] = [];
  // Stock postgres.js 3.4.9 leaves the statements queued behind a pipelined one pending
  // forever when the connection drops (our patch fails them): the first drop ends it all.
  let dropped: unknown;
  let onDrop: (error: unknown) => void = () => {};
  const drop = new Promise<never>((_, reject) => {
    onDrop = reject;
  });
  drop.catch(() => {});
  const run = (text: string, parameters: unknown[]) => {
    const rows = send(connection, text, parameters);
    rows.catch((error: unknown) => {
      if (dropped === undefined && isConnectionDrop(error)) {
        dropped = error;
        onDrop(error);
      }
    });
    sent.push(rows);
    return rows;
  };
  let ended = false;
  try {
    run('begin', []);
    const result = await Promise.race([
      work({ run: (statement, values) => run(statement.text, statement.parameters(values)) }),
      drop,
    ]);
    // COMMIT ends the transaction whatever came before (a failed one commits as ROLLBACK).
    ended = true;
    run('commit', []);
    await Promise.race([settled(sent), drop]);
    return result;
  } catch (error) {
    if (dropped === undefined && !ended) {
      await send(connection, 'rollback', []).catch(() => {});
    }
    if (dropped === undefined) await Promise.allSettled(sent);
    throw error;
  } finally {
    // A dropped connection is the pool's again already: releasing it would reopen it.
    if (dropped === undefined) connection.release();
  }
}

/** Waits for every statement, then throws the first failure (none is left in flight). */
async function settled(sent: readonly Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(sent)).find((r) => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}
