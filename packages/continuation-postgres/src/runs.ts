import {
  alreadyResolved,
  ContinuationError,
  decodeSuspension,
  notFound,
  type Suspension,
  type SuspensionRecord,
} from '@x/continuation';
import { lazyStatements, retryRead, rowsOf } from '@x/postgres-kit';
import type { Message } from '@x/wire';
import { and, desc, eq, inArray, lt, type Placeholder, type SQL, sql } from 'drizzle-orm';
import type { ContinuationDatabase } from './database.js';
import { wrapDatabaseError } from './errors.js';
import { type RunRow, runs, suspensions } from './schema.js';

/**
 * Where a run stands: `running` (a worker holds its lease), `waiting` (on a person's
 * answer), `ready` (answered, or due for a retry: any worker may claim it), and the final
 * `completed`, `cancelled` and `failed` (retries used up; `retry` makes it ready again).
 */
export type RunStatus = 'running' | 'waiting' | 'ready' | 'completed' | 'cancelled' | 'failed';

/** The statuses a run never leaves by itself. */
export const FINISHED_RUN_STATUSES: readonly RunStatus[] = ['completed', 'cancelled', 'failed'];

/** A run as {@link PostgresRunQueue} reports it. */
export interface RunRecord {
  runId: string;
  conversationId: string;
  status: RunStatus;
  /** The continuation the run waits on, resumes, or last resumed. */
  interactionId: string | null;
  /** What the resume needs beside the continuation (the person's answer), once ready. */
  input: unknown;
  /** Claims of the current wait so far (a retry or a lost lease adds one). */
  attempts: number;
  /** Why the last attempt failed, if it did. */
  lastError: string | null;
  /** The worker holding the run (`running`), or the last one that did. */
  leaseOwner: string | null;
  /** `running`: when the lease expires unless renewed. */
  leaseExpiresAt: Date | null;
  /** `ready`: when it may be claimed (later than now while a retry backs off). */
  readyAt: Date | null;
  /** The caller's own data, given at {@link PostgresRunQueue.create} (e.g. the model id). */
  meta: unknown;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

/** A new run, as {@link PostgresRunQueue.create} takes it. */
export interface NewRun {
  runId: string;
  conversationId: string;
  /** `waiting` on `interactionId`, or `completed` at once (a turn that asked nothing). */
  status: 'waiting' | 'completed';
  interactionId?: string;
  meta?: unknown;
  /** For `completed`: the whole transcript. */
  messages?: readonly Message[];
}

/** A run taken by {@link PostgresRunQueue.claim}, with what its resume needs. */
export interface ClaimedRun {
  /** Now `running`, leased to the claiming worker, `attempts` counted. */
  run: RunRecord;
  /** The continuation to resume, or undefined when it is gone or was resolved by another route. */
  suspension: Suspension | undefined;
}

/** How a claimed run ends, as {@link PostgresRunQueue.finish} records it. */
export type RunEnd =
  /** The turn completed: `messages` are those the resume added after the continuation's. */
  | { status: 'completed'; messages: readonly Message[] }
  /** The turn asked again: the run now waits on that new continuation. */
  | { status: 'waiting'; interactionId: string }
  | { status: 'cancelled'; reason: string }
  | { status: 'failed'; error: string };

/** Options of {@link PostgresRunQueue.claim}. */
export interface ClaimOptions {
  /** Names the claiming worker; unique per claim, it is the fencing token of the lease. */
  owner: string;
  /** How long the lease lasts unless renewed. */
  leaseMs: number;
  /** Runs not to take (e.g. those this worker already tried in one pass). */
  skip?: readonly string[];
}

/** Options of {@link PostgresRunQueue.list}. */
export interface ListRunsOptions {
  conversationId?: string;
  status?: RunStatus;
  /** At most this many, newest first; default 50. */
  limit?: number;
}

const DEFAULT_LIST_LIMIT = 50;

const columns = {
  runId: runs.runId,
  conversationId: runs.conversationId,
  status: runs.status,
  interactionId: runs.interactionId,
  input: runs.input,
  attempts: runs.attempts,
  lastError: runs.lastError,
  leaseOwner: runs.leaseOwner,
  dueAt: runs.dueAt,
  meta: runs.meta,
  createdAt: runs.createdAt,
  updatedAt: runs.updatedAt,
  finishedAt: runs.finishedAt,
};

type Selected = Omit<RunRow, 'transcript'>;

function toRecord(row: Selected): RunRecord {
  const { dueAt, ...rest } = row;
  return {
    ...rest,
    leaseExpiresAt: row.status === 'running' ? dueAt : null,
    readyAt: row.status === 'ready' ? dueAt : null,
  };
}

/** The fence of every write a worker makes to its run: still leased to it, still running. */
function heldBy(runId: string | Placeholder, owner: string | Placeholder): SQL {
  return and(eq(runs.runId, runId), eq(runs.leaseOwner, owner), eq(runs.status, 'running')) as SQL;
}

// Hot statements are built once per queue, on first use, and run as named prepared
// statements: one round trip each on postgres.js (PGlite ignores the names; a
// `prepare: false` client wins).
function prepareStatements(db: ContinuationDatabase) {
  const p = sql.placeholder;
  const lease = sql`now() + ${p('leaseMs')} * interval '1 millisecond'`;
  const completed = {
    status: 'completed' as const,
    transcript: sql`${p('transcript')}`,
    dueAt: null,
    finishedAt: sql`now()`,
    updatedAt: sql`now()`,
  };
  return lazyStatements({
    // The claim commits asynchronously: losing it in a crash only makes the run claimable
    // again, and the fenced terminal write refuses the worker that held it.
    claim: () =>
      db
        .update(runs)
        .set({
          status: 'running',
          leaseOwner: sql`${p('owner')}`,
          dueAt: lease,
          attempts: sql`${runs.attempts} + 1`,
          updatedAt: sql`now()`,
        })
        .where(
          and(
            eq(
              runs.runId,
              sql`(select ${runs.runId} from ${runs} where ${runs.status} in ('ready', 'running') and ${runs.dueAt} <= now() and not ${runs.runId} = any(${p('skip')}::text[]) order by ${runs.dueAt}, ${runs.runId} limit 1 for update skip locked)`,
            ),
            sql`set_config('synchronous_commit', 'off', true) = 'off'`,
          ),
        )
        .returning({
          ...columns,
          // Written out: drizzle leaves RETURNING's columns unqualified, which the subquery
          // would read as its own.
          record: sql<
            string | null
          >`(select s.record from x_continuation.suspensions s where s.interaction_id = "x_continuation"."runs"."interaction_id" and not s.resolved)`,
        })
        .prepare('x_runs_claim'),
    // JSON text or null, passed as is: drizzle would encode a null `meta` as the JSON `null`.
    create: () =>
      db
        .insert(runs)
        .values({
          runId: p('runId'),
          conversationId: p('conversationId'),
          status: p('status'),
          interactionId: sql`${p('interactionId')}`,
          meta: sql`${p('meta')}`,
          transcript: sql`${p('transcript')}`,
          finishedAt: sql`case when ${p('finished')} then now() end`,
        })
        .prepare('x_runs_create'),
    markReady: () =>
      db
        .update(runs)
        .set({ status: 'ready', input: p('input'), dueAt: sql`now()`, updatedAt: sql`now()` })
        .where(and(eq(runs.interactionId, p('interactionId')), eq(runs.status, 'waiting')))
        .returning(columns)
        .prepare('x_runs_mark_ready'),
    renew: () =>
      db
        .update(runs)
        .set({ dueAt: lease, updatedAt: sql`now()` })
        .where(heldBy(p('runId'), p('owner')))
        .returning({ runId: runs.runId })
        .prepare('x_runs_renew'),
    complete: () =>
      db
        .update(runs)
        .set(completed)
        .where(heldBy(p('runId'), p('owner')))
        .returning({ runId: runs.runId })
        .prepare('x_runs_complete'),
    // The run row is locked first (FOR UPDATE in the CTE), so that a worker that lost its
    // lease resolves nothing; the run completes only if its continuation was resolved here.
    completeResolving: () => {
      const resolved = db
        .$with('resolved', { interactionId: suspensions.interactionId })
        .as(
          sql`update ${suspensions} set resolved = true, resolved_at = now(), updated_at = now() where ${suspensions.interactionId} = (select ${runs.interactionId} from ${runs} where ${heldBy(p('runId'), p('owner'))} for update) and ${suspensions.resolved} = false returning ${suspensions.interactionId}`,
        );
      return db
        .with(resolved)
        .update(runs)
        .set(completed)
        .where(and(heldBy(p('runId'), p('owner')), sql`exists (select 1 from ${resolved})`))
        .returning({ runId: runs.runId })
        .prepare('x_runs_complete_resolving');
    },
  });
}

/**
 * The durable queue of unattended runs, in `x_continuation.runs` beside the continuations
 * it resumes (create both with `migrate(db)`). A run waits on a continuation, becomes
 * ready when the person answers, is claimed by one worker at a time under a lease, and
 * ends completed, cancelled or failed (or waits again, on the next question).
 *
 * - {@link claim} is one statement that takes one claimable run through a partial index,
 *   sets the lease and returns the continuation record: no transaction stays open while
 *   the worker runs the model.
 * - Every write of a claimed run names its lease owner, and is refused (`lease_lost`) once
 *   another worker took the run over: the worker that lost its lease commits nothing.
 * - Pass a transaction handle to write a run with rows of other packages, e.g. making a run
 *   ready in the same transaction as the answer that readies it.
 *
 * @example
 * const queue = new PostgresRunQueue(db);
 * const claimed = await queue.claim({ owner: `worker-${randomUUID()}`, leaseMs: 60_000 });
 * if (claimed) {
 *   // ... run the model, renewing the lease ...
 *   await db.transaction(async (tx) => {
 *     await new PostgresRunQueue(tx).finish(claimed.run.runId, owner, { status: 'completed', messages });
 *     await new PostgresContinuationStore(tx).markResolved(claimed.run.interactionId!);
 *   });
 * }
 */
export class PostgresRunQueue {
  readonly #db: ContinuationDatabase;
  readonly #statements: ReturnType<typeof prepareStatements>;

  constructor(db: ContinuationDatabase) {
    this.#db = db;
    this.#statements = prepareStatements(db);
  }

  /** Records a new run, waiting on its first question or already completed. */
  async create(run: NewRun): Promise<void> {
    const completed = run.status === 'completed';
    await this.#run(`create run "${run.runId}"`, () =>
      this.#statements.create.execute({
        runId: run.runId,
        conversationId: run.conversationId,
        status: run.status,
        interactionId: run.interactionId ?? null,
        meta: run.meta === undefined || run.meta === null ? null : JSON.stringify(run.meta),
        transcript: completed ? JSON.stringify(run.messages ?? []) : null,
        finished: completed,
      }),
    );
  }

  /**
   * The answer to `interactionId` arrived: its waiting run becomes ready to claim now, with
   * `input` for the resume. Returns the run, or undefined when no run waits on it (an
   * interactive chat's question, or a run already stopped).
   */
  async markReady(interactionId: string, input: unknown): Promise<RunRecord | undefined> {
    const [row] = await this.#run(`mark the run of "${interactionId}" ready`, () =>
      this.#statements.markReady.execute({ interactionId, input }),
    );
    return row && toRecord(row as Selected);
  }

  /**
   * {@link markReady} for many answers in one statement. Returns how many runs became
   * ready.
   */
  async markReadyMany(
    answers: ReadonlyArray<{ interactionId: string; input: unknown }>,
  ): Promise<number> {
    if (answers.length === 0) return 0;
    const entries = JSON.stringify(
      answers.map((a) => ({ interaction_id: a.interactionId, input: a.input })),
    );
    const result = await this.#run('mark runs ready', () =>
      this.#db.execute(sql`
        update ${runs} set status = 'ready', input = a.input, due_at = now(), updated_at = now()
        from jsonb_to_recordset(${entries}::jsonb) as a(interaction_id text, input jsonb)
        where ${runs.interactionId} = a.interaction_id and ${runs.status} = 'waiting'
        returning ${runs.runId}`),
    );
    return rowsOf(result).length;
  }

  /**
   * Takes one claimable run (ready and due, or running with an expired lease), oldest due
   * first, in one statement: it is leased to `owner` for `leaseMs` and its attempts go up
   * by one. Concurrent claims never take the same run.
   */
  async claim(options: ClaimOptions): Promise<ClaimedRun | undefined> {
    const [row] = await this.#run('claim a run', () =>
      this.#statements.claim.execute({
        owner: options.owner,
        leaseMs: options.leaseMs,
        skip: [...(options.skip ?? [])],
      }),
    );
    if (!row) return undefined;
    const { record, ...run } = row as Selected & { record: string | null };
    return {
      run: toRecord(run),
      suspension: record === null ? undefined : decodeRecord(run.interactionId ?? '', record),
    };
  }

  /**
   * How long until the next run becomes claimable (a retry's backoff or a lease running
   * out), in milliseconds by the server's clock: 0 when one is claimable now, undefined when
   * none is ready or running. A wake loop sleeps this long instead of polling blindly.
   */
  async nextDueInMs(): Promise<number | undefined> {
    const [row] = rowsOf(
      await this.#read('find the next due run', () =>
        this.#db.execute(
          sql`select ceil(extract(epoch from (min(${runs.dueAt}) - now())) * 1000)::float8 as ms from ${runs} where ${runs.status} in ('ready', 'running')`,
        ),
      ),
    );
    return row?.ms == null ? undefined : Math.max(0, Number(row.ms));
  }

  /** Extends the lease of a run `owner` holds; false once the lease was taken over. */
  async renew(runId: string, owner: string, leaseMs: number): Promise<boolean> {
    const rows = await this.#run(`renew the lease of run "${runId}"`, () =>
      this.#statements.renew.execute({ runId, owner, leaseMs }),
    );
    return rows.length === 1;
  }

  /**
   * Records how a claimed run ended, only while `owner` still holds it. Run it first in the
   * transaction that also writes the continuations, so that all of it commits or none.
   * @throws {ContinuationError} `lease_lost` when another worker took the run over.
   */
  async finish(runId: string, owner: string, end: RunEnd): Promise<void> {
    const rows = await this.#run(`finish run "${runId}"`, () => {
      if (end.status === 'completed') {
        return this.#statements.complete.execute({
          runId,
          owner,
          transcript: JSON.stringify(end.messages),
        });
      }
      const set =
        end.status === 'waiting'
          ? {
              status: 'waiting' as const,
              interactionId: end.interactionId,
              input: null,
              attempts: 0,
              lastError: null,
              dueAt: null,
            }
          : {
              status: end.status,
              lastError: end.status === 'failed' ? end.error : end.reason,
              dueAt: null,
              finishedAt: sql`now()`,
            };
      return this.#db
        .update(runs)
        .set({ ...set, updatedAt: sql`now()` })
        .where(heldBy(runId, owner))
        .returning({ runId: runs.runId });
    });
    if (rows.length === 0) throw leaseLost(runId, owner);
  }

  /**
   * Records that a claimed run completed and resolves the continuation it resumed, in one
   * statement (one round trip, no transaction to hold): both are written or neither, only
   * while `owner` still holds the run. `messages` are those the resume added after the
   * continuation's.
   * @throws {ContinuationError} `lease_lost` when another worker took the run over,
   *   `already_resolved` when its continuation was resolved by another route (or `not_found`
   *   when it is gone): nothing was written.
   */
  async complete(runId: string, owner: string, messages: readonly Message[]): Promise<void> {
    const rows = await this.#run(`complete run "${runId}"`, () =>
      this.#statements.completeResolving.execute({
        runId,
        owner,
        transcript: JSON.stringify(messages),
      }),
    );
    if (rows.length === 1) return;
    const run = await this.get(runId);
    if (run?.status !== 'running' || run.leaseOwner !== owner) throw leaseLost(runId, owner);
    const interactionId = run.interactionId ?? '';
    const [left] = await this.#read(`read the continuation of run "${runId}"`, () =>
      this.#db
        .select({ resolved: suspensions.resolved })
        .from(suspensions)
        .where(eq(suspensions.interactionId, interactionId)),
    );
    throw left ? alreadyResolved(interactionId) : notFound(interactionId);
  }

  /**
   * An attempt failed with `error`: the run is ready again after `retryInMs`, or `failed`
   * when `retryInMs` is undefined (no retry left). Only while `owner` holds it.
   * @throws {ContinuationError} `lease_lost` when another worker took the run over.
   */
  async fail(
    runId: string,
    owner: string,
    error: string,
    retryInMs: number | undefined,
  ): Promise<'ready' | 'failed'> {
    const status = retryInMs === undefined ? 'failed' : 'ready';
    const rows = await this.#run(`record a failed attempt of run "${runId}"`, () =>
      this.#db
        .update(runs)
        .set({
          status,
          lastError: error,
          dueAt:
            retryInMs === undefined ? null : sql`now() + ${retryInMs} * interval '1 millisecond'`,
          finishedAt: retryInMs === undefined ? sql`now()` : null,
          updatedAt: sql`now()`,
        })
        .where(heldBy(runId, owner))
        .returning({ runId: runs.runId }),
    );
    if (rows.length === 0) throw leaseLost(runId, owner);
    return status;
  }

  /**
   * Makes a failed run ready again, with its attempts counted from zero.
   * @throws {ContinuationError} `not_found` for an unknown run, `invalid` for one not failed.
   */
  async retry(runId: string): Promise<RunRecord> {
    const [row] = await this.#run(`retry run "${runId}"`, () =>
      this.#db
        .update(runs)
        .set({
          status: 'ready',
          attempts: 0,
          dueAt: sql`now()`,
          finishedAt: null,
          updatedAt: sql`now()`,
        })
        .where(and(eq(runs.runId, runId), eq(runs.status, 'failed')))
        .returning(columns),
    );
    if (row) return toRecord(row);
    const current = await this.get(runId);
    if (!current) throw new ContinuationError('not_found', `no run "${runId}"`);
    throw new ContinuationError(
      'invalid',
      `run "${runId}" is ${current.status}: only a failed run can be retried`,
      { field: 'status' },
    );
  }

  /**
   * Cancels every run of the conversation that has not finished (the conversation was
   * stopped); a worker running one then fails its terminal write. Returns how many.
   */
  async cancelConversation(conversationId: string, reason = 'stopped'): Promise<number> {
    const rows = await this.#run(`cancel the runs of "${conversationId}"`, () =>
      this.#db
        .update(runs)
        .set({
          status: 'cancelled',
          lastError: reason,
          leaseOwner: null,
          dueAt: null,
          finishedAt: sql`now()`,
          updatedAt: sql`now()`,
        })
        .where(
          and(
            eq(runs.conversationId, conversationId),
            inArray(runs.status, ['running', 'waiting', 'ready']),
          ),
        )
        .returning({ runId: runs.runId }),
    );
    return rows.length;
  }

  /** The run, or undefined. */
  async get(runId: string): Promise<RunRecord | undefined> {
    const [row] = await this.#read(`read run "${runId}"`, () =>
      this.#db.select(columns).from(runs).where(eq(runs.runId, runId)).limit(1),
    );
    return row && toRecord(row);
  }

  /** These runs (those that exist), by run id. */
  async getMany(runIds: readonly string[]): Promise<Map<string, RunRecord>> {
    if (runIds.length === 0) return new Map();
    const rows = await this.#read('read runs', () =>
      this.#db
        .select(columns)
        .from(runs)
        .where(inArray(runs.runId, [...runIds])),
    );
    return new Map(rows.map((row) => [row.runId, toRecord(row)]));
  }

  /** Runs newest first, optionally of one conversation and/or in one status. */
  async list(options: ListRunsOptions = {}): Promise<RunRecord[]> {
    const conditions: SQL[] = [];
    if (options.conversationId !== undefined)
      conditions.push(eq(runs.conversationId, options.conversationId));
    if (options.status !== undefined) conditions.push(eq(runs.status, options.status));
    const limit =
      options.limit !== undefined && options.limit > 0 ? options.limit : DEFAULT_LIST_LIMIT;
    const rows = await this.#read('list runs', () =>
      this.#db
        .select(columns)
        .from(runs)
        .where(and(...conditions))
        .orderBy(desc(runs.createdAt), desc(runs.runId))
        .limit(limit),
    );
    return rows.map(toRecord);
  }

  /**
   * The transcript of a completed run: the messages of the continuation it last resumed
   * followed by those the resume added (or the whole transcript of a run that never
   * waited). Undefined while the run has not completed.
   */
  async transcript(runId: string): Promise<Message[] | undefined> {
    const [row] = await this.#read(`read the transcript of run "${runId}"`, () =>
      this.#db
        .select({
          transcript: runs.transcript,
          interactionId: runs.interactionId,
          record: suspensions.record,
        })
        .from(runs)
        .leftJoin(suspensions, eq(suspensions.interactionId, runs.interactionId))
        .where(eq(runs.runId, runId))
        .limit(1),
    );
    if (!row || row.transcript === null) return undefined;
    const added = JSON.parse(row.transcript) as Message[];
    if (row.record === null) return added;
    return [...(decodeRecord(row.interactionId ?? '', row.record).messages ?? []), ...added];
  }

  /**
   * Deletes finished runs that finished before `cutoff`. Returns how many; with
   * `options.dryRun` only counts them.
   */
  async purgeFinishedBefore(cutoff: Date, options: { dryRun?: boolean } = {}): Promise<number> {
    const old = and(inArray(runs.status, [...FINISHED_RUN_STATUSES]), lt(runs.finishedAt, cutoff));
    if (options.dryRun) {
      const [row] = await this.#read('count finished runs', () =>
        this.#db.select({ count: sql<number>`count(*)::int` }).from(runs).where(old),
      );
      return Number(row?.count ?? 0);
    }
    const rows = await this.#run('purge finished runs', () =>
      this.#db.delete(runs).where(old).returning({ runId: runs.runId }),
    );
    return rows.length;
  }

  /** The conversations that have a run in one of `statuses`, each once, in no set order. */
  async conversationsWith(statuses: readonly RunStatus[]): Promise<string[]> {
    if (statuses.length === 0) return [];
    const rows = await this.#read('list the conversations of runs', () =>
      this.#db
        .selectDistinct({ conversationId: runs.conversationId })
        .from(runs)
        .where(inArray(runs.status, [...statuses])),
    );
    return rows.map((row) => row.conversationId);
  }

  async #run<T>(doing: string, query: () => PromiseLike<T>): Promise<T> {
    try {
      return await query();
    } catch (error) {
      throw wrapDatabaseError(error, doing);
    }
  }

  // A read is tried once more over a connection the server dropped (stock postgres.js
  // reports the old connection's error on the first statement after it); writes never are.
  #read<T>(doing: string, query: () => PromiseLike<T>): Promise<T> {
    return this.#run(doing, () => retryRead(query));
  }
}

function leaseLost(runId: string, owner: string): ContinuationError {
  return new ContinuationError(
    'lease_lost',
    `run "${runId}" is no longer held by ${owner}: its lease expired and another worker took it over, or it was stopped; nothing was written`,
  );
}

function decodeRecord(interactionId: string, record: string): Suspension {
  let json: SuspensionRecord;
  try {
    json = JSON.parse(record) as SuspensionRecord;
  } catch (error) {
    throw new ContinuationError(
      'invalid',
      `record of interaction "${interactionId}" is not valid JSON: ${(error as Error).message}`,
      { interactionId, field: '(record)', cause: error },
    );
  }
  return decodeSuspension(json, { owned: true });
}
