import { fillPlaceholders, type SQL } from 'drizzle-orm';
import { PgDatabase, PgDialect, PgTransaction } from 'drizzle-orm/pg-core';
import { PostgresJsSession, PostgresJsTransaction } from 'drizzle-orm/postgres-js/session';
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
 * A drizzle database that only builds statements, never runs one: the query builder for
 * {@link prepareOnce} (`statementBuilder.update(t).set(...).where(...).getSQL()`).
 */
export const statementBuilder = new PgDatabase(
  new PgDialect(),
  undefined as never,
  undefined,
) as unknown as StoreDatabase;

/**
 * A statement compiled from `build` (an `sql` template, or a query of
 * {@link statementBuilder}'s `.getSQL()`, with `sql.placeholder(name)`s) on its first use,
 * once per process; run it with {@link runPrepared} or a pipeline's `run`. Its rows are the
 * driver's, keyed by column name or alias: cast what drivers return differently (times) in
 * the SQL.
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

/**
 * A JSON value as a prepared statement's jsonb parameter: its JSON text (drivers encode
 * objects differently), or SQL NULL for null and undefined.
 */
export function jsonParameter(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
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
  const sent: Promise<unknown>[] = [];
  return onReservedConnection(client as PoolClient, 'begin', async (connection, watch, ended) => {
    const run = (text: string, parameters: unknown[]) => {
      const rows = watch(send(connection, text, parameters));
      sent.push(rows);
      return rows;
    };
    const result = await work({
      run: (statement, values) => run(statement.text, statement.parameters(values)),
    });
    // COMMIT ends the transaction whatever came before (a failed one commits as ROLLBACK).
    ended();
    run('commit', []);
    await settled(sent);
    return result;
  });
}

/** A postgres.js pool's client, which can reserve a connection. */
type PoolClient = PostgresJsClient & Required<Pick<PostgresJsClient, 'reserve'>>;

/**
 * Runs `body` in a transaction on one reserved connection of `client`, `begin` sent without
 * waiting for it (it goes out with the first statement). `watch` a statement to end it all at
 * the first dropped connection; call `ended` once COMMIT is sent, after which no ROLLBACK is.
 */
async function onReservedConnection<T>(
  client: PoolClient,
  begin: string,
  body: (
    connection: PostgresJsClient,
    watch: <R>(rows: Promise<R>) => Promise<R>,
    ended: () => void,
  ) => Promise<T>,
): Promise<T> {
  // Stock postgres.js 3.4.9 can strand this after a dropped connection (porsager/postgres#1195:
  // the README gives the patch).
  const connection = await client.reserve();
  // Stock postgres.js 3.4.9 leaves the statements queued behind a pipelined one pending
  // forever when the connection drops (our patch fails them): the first drop ends it all.
  let dropped: unknown;
  let onDrop: (error: unknown) => void = () => {};
  const drop = new Promise<never>((_, reject) => {
    onDrop = reject;
  });
  drop.catch(() => {});
  const watch = <R>(rows: Promise<R>) => {
    rows.catch((error: unknown) => {
      if (dropped === undefined && isConnectionDrop(error)) {
        dropped = error;
        onDrop(error);
      }
    });
    return rows;
  };
  let ended = false;
  try {
    const begun = watch(send(connection, begin, []));
    const result = await Promise.race([
      body(connection, watch, () => {
        ended = true;
      }),
      drop,
    ]);
    await Promise.race([begun, drop]);
    return result;
  } catch (error) {
    if (dropped === undefined && !ended) {
      await send(connection, 'rollback', []).catch(() => {});
    }
    throw error;
  } finally {
    // A dropped connection is the pool's again already: releasing it would reopen it.
    if (dropped === undefined) connection.release();
  }
}

/** How {@link transaction} begins: `db.transaction`'s isolation level and access mode. */
export interface TransactionOptions {
  isolationLevel?: 'read uncommitted' | 'read committed' | 'repeatable read' | 'serializable';
  accessMode?: 'read only' | 'read write';
}

/**
 * Given to {@link transaction}'s work: `commitWith(last)` sends COMMIT right behind the
 * statements sent so far (on postgres.js they share a round trip) and returns `last`, the
 * promise of the last of them. Call it once every statement of the transaction was sent
 * (none may follow it), and await what it returns: the transaction commits only if every
 * statement succeeded. Elsewhere (PGlite, inside a caller's transaction) it returns `last`
 * and the transaction commits as usual.
 */
export type CommitWith = <R>(last: Promise<R>) => Promise<R>;

/**
 * `db.transaction(work)` with one round trip less: on a postgres.js database (not a
 * transaction) BEGIN is sent together with the first statement instead of on its own, on one
 * reserved connection, and statements `work` starts without waiting for each other go out
 * together (postgres.js pipelines them); with {@link CommitWith} COMMIT goes out with the
 * last ones. `tx` is a drizzle transaction handle like `db.transaction`'s (a nested
 * `tx.transaction` is a savepoint). Inside a caller's transaction it runs there; on PGlite it
 * is `db.transaction`. Commits only if `work` succeeded; the first dropped connection fails
 * it, also on stock postgres.js.
 *
 * @example
 * await transaction(db, async (tx, commitWith) => {
 *   const [pause] = await runPrepared(tx, answer, { token });
 *   await commitWith(runPrepared(tx, markReady, { token }));
 * });
 */
export async function transaction<T>(
  db: StoreDatabase,
  work: (tx: StoreDatabase, commitWith: CommitWith) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const client = clientOf(db);
  const asUsual: CommitWith = (last) => last;
  if (db instanceof PgTransaction || !isPostgresJs(client) || client.reserve === undefined) {
    if (db instanceof PgTransaction) return work(db, asUsual);
    const inside = (tx: unknown) => work(tx as StoreDatabase, asUsual);
    // drizzle sends SET TRANSACTION for any options object, an empty one too.
    const given = options.isolationLevel !== undefined || options.accessMode !== undefined;
    return given ? db.transaction(inside, options) : db.transaction(inside);
  }
  const pool = client as PoolClient;
  const begin = [
    'begin',
    options.isolationLevel && `isolation level ${options.isolationLevel}`,
    options.accessMode,
  ]
    .filter(Boolean)
    .join(' ');
  return onReservedConnection(pool, begin, async (connection, watch, ended) => {
    let commit: Promise<PreparedRow[]> | undefined;
    const sendCommit = () => {
      if (commit === undefined) {
        ended();
        commit = watch(send(connection, 'commit', []));
        commit.catch(() => {});
      }
      return commit;
    };
    const tx = drizzleTransaction(db, connection, watch, () => commit !== undefined);
    try {
      const result = await work(tx, (last) => {
        sendCommit();
        return last;
      });
      const done = (await sendCommit()) as PreparedRow[] & { command?: string };
      // A statement that failed unobserved turns COMMIT into ROLLBACK.
      if (done.command === 'ROLLBACK') {
        throw new Error('the transaction was rolled back: one of its statements failed');
      }
      return result;
    } catch (error) {
      // Sent already, COMMIT ends the transaction (as ROLLBACK when a statement failed).
      if (commit !== undefined) await commit.catch(() => {});
      throw error;
    }
  });
}

/** What drizzle's postgres.js session calls on a transaction's client. */
interface TransactionClient {
  unsafe(text: string, parameters?: unknown[], options?: { prepare?: boolean }): PendingQuery;
  savepoint<R>(fn: (sql: TransactionClient) => Promise<R>): Promise<R>;
}

// The drizzle objects behind a postgres.js database, as far as they are used here.
interface DrizzleParts {
  dialect: PgDialect;
  session: { schema: unknown; options: unknown };
}

/**
 * A drizzle transaction handle whose statements run on `connection` (each watched for a
 * dropped connection, none taken once `committed`), as drizzle's own `db.transaction` makes
 * one; a nested transaction is a savepoint.
 */
function drizzleTransaction(
  db: StoreDatabase,
  connection: PostgresJsClient,
  watch: <R>(rows: Promise<R>) => Promise<R>,
  committed: () => boolean,
): StoreDatabase {
  const { dialect, session } = db as unknown as DrizzleParts;
  let savepoints = 0;
  const client: TransactionClient = {
    unsafe(text: string, parameters?: unknown[], options?: { prepare?: boolean }) {
      if (committed()) throw new Error(`a statement after the transaction's COMMIT: ${text}`);
      const query = connection.unsafe(text, parameters, options);
      watch(query);
      return query;
    },
    async savepoint<R>(fn: (sql: TransactionClient) => Promise<R>): Promise<R> {
      const name = `kit_savepoint_${++savepoints}`;
      await client.unsafe(`savepoint ${name}`);
      try {
        const result = await fn(client);
        await client.unsafe(`release savepoint ${name}`);
        return result;
      } catch (error) {
        await client.unsafe(`rollback to savepoint ${name}`);
        throw error;
      }
    },
  };
  const txSession = new PostgresJsSession(
    client as never,
    dialect,
    session.schema as never,
    session.options as never,
  );
  return new PostgresJsTransaction(
    dialect,
    txSession,
    session.schema as never,
  ) as unknown as StoreDatabase;
}

/** Waits for every statement, then throws the first failure (none is left in flight). */
async function settled(sent: readonly Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(sent)).find((r) => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}
