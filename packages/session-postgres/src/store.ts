import { retryRead } from '@x/postgres-kit';
import {
  assertSafeThreadId,
  type CheckpointStore,
  type CheckpointSummary,
  conflictError,
  type DeleteOptions,
  normaliseExpected,
  type PutOptions,
  parseCheckpoint,
  type SessionCheckpoint,
  type StoredCheckpoint,
  serializeCheckpoint,
} from '@x/session';
import { and, asc, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import type { SessionDatabase } from './database.js';
import { wrapDatabaseError } from './errors.js';
import { checkpoints } from './schema.js';

/**
 * A {@link CheckpointStore} on PostgreSQL or PGlite via drizzle; a transaction handle writes
 * in the caller's transaction. Run {@link migrate} once first. Each write is one statement
 * whose `WHERE` is the revision check, so a concurrent writer updates nothing and gets
 * `conflict`; a delete leaves a tombstone row, so revisions never repeat.
 *
 * @example
 * import { drizzle } from 'drizzle-orm/postgres-js';
 * import postgres from 'postgres';
 * import { migrate, PostgresCheckpointStore } from '@x/session-postgres';
 *
 * const db = drizzle({ client: postgres(process.env.DATABASE_URL!) });
 * await migrate(db);
 * const store = new PostgresCheckpointStore(db);
 * const revision = await store.put('thread-1', checkpoint);
 */
export class PostgresCheckpointStore implements CheckpointStore {
  readonly #db: SessionDatabase;

  constructor(db: SessionDatabase) {
    this.#db = db;
  }

  async get(threadId: string): Promise<StoredCheckpoint | undefined> {
    assertSafeThreadId(threadId);
    const row = await this.#row(threadId);
    if (row === undefined || row.checkpoint === null) return undefined;
    return { threadId, revision: row.revision, checkpoint: parseCheckpoint(row.checkpoint) };
  }

  async put(
    threadId: string,
    checkpoint: SessionCheckpoint,
    options: PutOptions = {},
  ): Promise<number> {
    assertSafeThreadId(threadId);
    const expected = normaliseExpected(options.expectedRevision);
    const parsed = parseCheckpoint(checkpoint);
    const text = serializeCheckpoint(parsed);
    let written: Array<{ revision: number }>;
    try {
      if (expected === null) {
        written = await this.#db
          .insert(checkpoints)
          .values({ threadId, revision: 1, version: parsed.version, checkpoint: text })
          .onConflictDoUpdate({
            target: checkpoints.threadId,
            set: {
              revision: sql`${checkpoints.revision} + 1`,
              version: parsed.version,
              checkpoint: text,
              updatedAt: sql`now()`,
            },
            setWhere: isNull(checkpoints.checkpoint),
          })
          .returning({ revision: checkpoints.revision });
      } else {
        written = await this.#db
          .update(checkpoints)
          .set({
            revision: sql`${checkpoints.revision} + 1`,
            version: parsed.version,
            checkpoint: text,
            updatedAt: sql`now()`,
          })
          .where(
            and(
              eq(checkpoints.threadId, threadId),
              eq(checkpoints.revision, expected),
              isNotNull(checkpoints.checkpoint),
            ),
          )
          .returning({ revision: checkpoints.revision });
      }
    } catch (error) {
      throw wrapDatabaseError(error, `writing thread "${threadId}"`, threadId);
    }
    const row = written[0];
    if (row === undefined)
      throw conflictError(threadId, expected, await this.#liveRevision(threadId));
    return row.revision;
  }

  async delete(threadId: string, options: DeleteOptions = {}): Promise<boolean> {
    assertSafeThreadId(threadId);
    const expected =
      options.expectedRevision === undefined
        ? undefined
        : normaliseExpected(options.expectedRevision);
    let deleted: Array<{ revision: number }>;
    try {
      deleted = await this.#db
        .update(checkpoints)
        .set({
          revision: sql`${checkpoints.revision} + 1`,
          version: null,
          checkpoint: null,
          updatedAt: sql`now()`,
        })
        .where(
          and(
            eq(checkpoints.threadId, threadId),
            isNotNull(checkpoints.checkpoint),
            expected === undefined || expected === null
              ? undefined
              : eq(checkpoints.revision, expected),
          ),
        )
        .returning({ revision: checkpoints.revision });
    } catch (error) {
      throw wrapDatabaseError(error, `deleting thread "${threadId}"`, threadId);
    }
    if (deleted.length > 0) return true;
    if (expected !== undefined) {
      const live = await this.#liveRevision(threadId);
      if (live !== expected) throw conflictError(threadId, expected, live);
    }
    return false;
  }

  async list(): Promise<CheckpointSummary[]> {
    try {
      return await retryRead(() =>
        this.#db
          .select({ threadId: checkpoints.threadId, revision: checkpoints.revision })
          .from(checkpoints)
          .where(isNotNull(checkpoints.checkpoint))
          .orderBy(sql`${checkpoints.threadId} collate "C"`, asc(checkpoints.revision)),
      );
    } catch (error) {
      throw wrapDatabaseError(error, 'listing threads');
    }
  }

  async #liveRevision(threadId: string): Promise<number | null> {
    const row = await this.#row(threadId);
    return row === undefined || row.checkpoint === null ? null : row.revision;
  }

  async #row(
    threadId: string,
  ): Promise<{ revision: number; checkpoint: string | null } | undefined> {
    try {
      const rows = await retryRead(() =>
        this.#db
          .select({ revision: checkpoints.revision, checkpoint: checkpoints.checkpoint })
          .from(checkpoints)
          .where(eq(checkpoints.threadId, threadId)),
      );
      return rows[0];
    } catch (error) {
      throw wrapDatabaseError(error, `reading thread "${threadId}"`, threadId);
    }
  }
}
