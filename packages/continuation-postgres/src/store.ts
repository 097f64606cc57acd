import {
  alreadyResolved,
  assertSafeId,
  ContinuationError,
  type ContinuationStore,
  compareSuspensions,
  DEFAULT_MAX_RECORD_BYTES,
  decodeSuspension,
  type ListUnresolvedFilter,
  notFound,
  prepareSave,
  type Suspension,
} from '@x/continuation';
import { prepareOnce, retryRead, runPrepared, statementBuilder } from '@x/postgres-kit';
import { and, eq, type SQL, sql } from 'drizzle-orm';
import type { ContinuationDatabase } from './database.js';
import { wrapDatabaseError } from './errors.js';
import { suspensions } from './schema.js';

// The fixed-shape statements are compiled once per process, on first use, and run as named
// prepared statements on the handle they are given (a store is made per transaction, and
// building a drizzle query costs more than executing it; without a name postgres.js sends a
// parameterised statement unnamed, which costs a Describe round trip before every
// execution). PGlite ignores the names; a client created with `prepare: false` (e.g. behind
// PgBouncer) still wins.
const id = sql.placeholder('id');
const unresolved = sql`${suspensions.resolved} = false`;
const statements = {
  // `excluded.*`: the record is sent once, not twice (as values and as the update).
  save: prepareOnce(() =>
    statementBuilder
      .insert(suspensions)
      .values({
        interactionId: id,
        sessionId: sql.placeholder('sessionId'),
        runId: sql.placeholder('runId'),
        record: sql.placeholder('record'),
        createdAt: sql.placeholder('createdAt'),
      })
      .onConflictDoUpdate({
        target: suspensions.interactionId,
        set: {
          sessionId: sql`excluded.session_id`,
          runId: sql`excluded.run_id`,
          record: sql`excluded.record`,
          createdAt: sql`excluded.created_at`,
          updatedAt: sql`now()`,
        },
        setWhere: unresolved,
      })
      .returning({ id: suspensions.interactionId })
      .getSQL(),
  ),
  load: prepareOnce(() =>
    statementBuilder
      .select({ record: suspensions.record, resolved: suspensions.resolved })
      .from(suspensions)
      .where(eq(suspensions.interactionId, id))
      .getSQL(),
  ),
  markResolved: prepareOnce(() =>
    statementBuilder
      .update(suspensions)
      .set({ resolved: sql`true`, resolvedAt: sql`now()`, updatedAt: sql`now()` })
      .where(and(eq(suspensions.interactionId, id), unresolved))
      .returning({ id: suspensions.interactionId })
      .getSQL(),
  ),
  exists: prepareOnce(() =>
    statementBuilder
      .select({ id: suspensions.interactionId })
      .from(suspensions)
      .where(eq(suspensions.interactionId, id))
      .getSQL(),
  ),
};

/** Postgres text cannot hold NUL, so no stored session or run id has one. */
function storable(id: string): boolean {
  return typeof id === 'string' && !id.includes('\u0000');
}

/** Options of {@link PostgresContinuationStore}. */
export interface PostgresContinuationStoreOptions {
  /** Largest encoded record `save` writes and `load` reads. Default 16 MiB. */
  maxRecordBytes?: number;
}

/**
 * A {@link ContinuationStore} over PostgreSQL (or PGlite) through a caller-supplied drizzle
 * database, in the table `x_continuation.suspensions` (create it with `migrate(db)`).
 *
 * - `save` is one `INSERT ... ON CONFLICT DO UPDATE ... WHERE NOT resolved`: it replaces an
 *   unresolved row atomically and never touches a resolved one.
 * - `markResolved` is one conditional `UPDATE ... WHERE NOT resolved RETURNING`: of several
 *   racing callers, on any number of connections or machines, exactly one gets the row.
 * - Pass a transaction handle to write a suspension together with rows of other packages:
 *   `new PostgresContinuationStore(tx)`.
 *
 * @example
 * import { drizzle } from 'drizzle-orm/postgres-js';
 * import postgres from 'postgres';
 * import { migrate, PostgresContinuationStore } from '@x/continuation-postgres';
 *
 * const db = drizzle({ client: postgres(process.env.DATABASE_URL!) });
 * await migrate(db);
 * const store = new PostgresContinuationStore(db);
 */
export class PostgresContinuationStore implements ContinuationStore {
  readonly #db: ContinuationDatabase;
  readonly #maxRecordBytes: number;

  constructor(db: ContinuationDatabase, options: PostgresContinuationStoreOptions = {}) {
    this.#db = db;
    this.#maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  }

  async save(suspension: Suspension): Promise<void> {
    const { suspension: s, text } = prepareSave(suspension, this.#maxRecordBytes);
    const id = s.interactionId;
    let written: unknown[];
    try {
      written = await runPrepared(this.#db, statements.save, {
        id,
        sessionId: s.sessionId ?? null,
        runId: s.runId ?? null,
        record: text,
        createdAt: s.createdAt,
      });
    } catch (error) {
      throw wrapDatabaseError(error, `save interaction "${id}"`, id);
    }
    // No row back: the conflicting row is resolved and was left alone.
    if (written.length === 0) throw alreadyResolved(id);
  }

  async load(interactionId: string): Promise<Suspension> {
    assertSafeId('interaction id', interactionId);
    let rows: Array<{ record?: unknown; resolved?: unknown }>;
    try {
      rows = await retryRead(() => runPrepared(this.#db, statements.load, { id: interactionId }));
    } catch (error) {
      throw wrapDatabaseError(error, `load interaction "${interactionId}"`, interactionId);
    }
    const row = rows[0];
    if (row === undefined) throw notFound(interactionId);
    if (row.resolved === true) throw alreadyResolved(interactionId);
    const s = this.#decode(interactionId, String(row.record));
    if (s.resolved) throw alreadyResolved(interactionId);
    return s;
  }

  async markResolved(interactionId: string): Promise<void> {
    assertSafeId('interaction id', interactionId);
    try {
      const won = await runPrepared(this.#db, statements.markResolved, { id: interactionId });
      if (won.length === 1) return;
      const exists = await retryRead(() =>
        runPrepared(this.#db, statements.exists, { id: interactionId }),
      );
      throw exists.length === 0 ? notFound(interactionId) : alreadyResolved(interactionId);
    } catch (error) {
      throw wrapDatabaseError(error, `mark interaction "${interactionId}" resolved`, interactionId);
    }
  }

  async listUnresolved(filter: ListUnresolvedFilter = {}): Promise<Suspension[]> {
    if (!storable(filter.sessionId ?? '') || !storable(filter.runId ?? '')) return [];
    const conditions: SQL[] = [eq(suspensions.resolved, false)];
    if (filter.sessionId !== undefined)
      conditions.push(eq(suspensions.sessionId, filter.sessionId));
    if (filter.runId !== undefined) conditions.push(eq(suspensions.runId, filter.runId));
    let rows: Array<{ id: string; record: string }>;
    try {
      rows = await retryRead(() =>
        this.#db
          .select({ id: suspensions.interactionId, record: suspensions.record })
          .from(suspensions)
          .where(and(...conditions))
          .orderBy(suspensions.createdAt),
      );
    } catch (error) {
      throw wrapDatabaseError(error, 'list unresolved continuations');
    }
    // Sorted again in JS: ties on created_at order by id in code-unit order, whatever the collation.
    return rows.map((row) => this.#decode(row.id, row.record)).sort(compareSuspensions);
  }

  #decode(interactionId: string, record: string): Suspension {
    if (Buffer.byteLength(record) > this.#maxRecordBytes) {
      throw new ContinuationError(
        'invalid',
        `record of interaction "${interactionId}" is over the limit of ${this.#maxRecordBytes} bytes`,
        { interactionId, field: '(record)' },
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(record);
    } catch (error) {
      throw new ContinuationError(
        'invalid',
        `record of interaction "${interactionId}" is not valid JSON: ${(error as Error).message}`,
        { interactionId, field: '(record)', cause: error },
      );
    }
    const s = decodeSuspension(json, { owned: true });
    if (s.interactionId !== interactionId) {
      throw new ContinuationError(
        'invalid',
        `row "${interactionId}" holds interaction_id "${s.interactionId}"`,
        { interactionId, field: 'interaction_id' },
      );
    }
    return s;
  }
}
