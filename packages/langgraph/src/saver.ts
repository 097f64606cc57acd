import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  getCheckpointId,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
} from '@langchain/langgraph-checkpoint';
import { type PreparedRow, retryRead, rowsOf, runPrepared } from '@x/postgres-kit';
import { PgTransaction } from 'drizzle-orm/pg-core';
import { ThreadWrites } from './batches.js';
import { packBlob, unpackBlob } from './compression.js';
import type { LangGraphDatabase } from './database.js';
import { DeltaBases } from './deltas.js';
import { LangGraphError, wrapDatabaseError } from './errors.js';
import { CheckpointSerializer } from './serde.js';
import * as statements from './statements.js';

/** Options of {@link PostgresCheckpointSaver}. */
export interface PostgresCheckpointSaverOptions {
  /**
   * How channel values, writes and metadata are serialized. Default LangGraph's
   * `JsonPlusSerializer`, with plain JSON written by `JSON.stringify` (the same bytes, faster).
   */
  serde?: SerializerProtocol;
  /**
   * Whether `put` and `putWrites` wait for their WAL to reach disk before they return. Default
   * `true`. `false` commits them asynchronously (`synchronous_commit = off` for their own
   * transactions), several times faster on a disk whose flush takes milliseconds: a crash of
   * the server (never of the client) may then lose the last ~0.6 s of checkpoints, so the graph
   * runs those steps again when resumed; nothing is ever half written, and the next synchronous
   * commit on the server (a question row, a run's status) makes them durable. A transaction
   * handle always commits as its caller's transaction does.
   */
  synchronousCommit?: boolean;
}

/** Where a checkpoint is: the three keys of a LangGraph config's `configurable`. */
interface Address {
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
}

const decoder = new TextDecoder();

/**
 * LangGraph's checkpoint saver on PostgreSQL or PGlite, through drizzle: compile a graph
 * with it (`compile({ checkpointer })`) and its threads survive restarts. Run {@link migrate}
 * once first. Each call is one SQL statement: `put` stores the checkpoint and only the
 * channel values `newVersions` names (a value is stored once per version and shared by the
 * checkpoints after it; an array that only grew, as the items appended to the one stored
 * before), `putWrites` a task's writes (a regular write already stored is kept, a special
 * channel's replaced), `deleteThread` everything of a thread. The writes of a thread sent
 * while one is in flight go out together next, in one transaction. Ids compare by code
 * point, as LangGraph compares them. A transaction handle writes in the caller's transaction.
 *
 * @throws {LangGraphError} `invalid` when a config lacks what the call needs (a `thread_id`
 *   for writes, a `checkpoint_id` for `putWrites`) or names it with a non-string;
 *   `unavailable` when the database fails.
 * @example
 * import { MessagesAnnotation, StateGraph } from '@langchain/langgraph';
 * import { migrate, PostgresCheckpointSaver } from '@x/langgraph';
 *
 * await migrate(db);
 * const graph = new StateGraph(MessagesAnnotation)
 *   .addNode('reply', reply)
 *   .addEdge('__start__', 'reply')
 *   .compile({ checkpointer: new PostgresCheckpointSaver(db) });
 * await graph.invoke({ messages: [['user', 'hi']] }, { configurable: { thread_id: 't-1' } });
 */
export class PostgresCheckpointSaver extends BaseCheckpointSaver {
  readonly #db: LangGraphDatabase;
  /** `synchronous_commit` for the saver's writes: `off`, or null for the server's own. */
  readonly #commit: 'off' | null;
  /** The values the next deltas extend. */
  readonly #bases = new DeltaBases();
  readonly #writes: ThreadWrites;

  constructor(db: LangGraphDatabase, options: PostgresCheckpointSaverOptions = {}) {
    super(options.serde ?? new CheckpointSerializer());
    this.#db = db;
    this.#writes = new ThreadWrites(db);
    this.#commit =
      options.synchronousCommit === false && !(db instanceof PgTransaction) ? 'off' : null;
  }

  /**
   * The checkpoint `config` names (`thread_id`, `checkpoint_ns` default `''`, and
   * `checkpoint_id`, else the thread's newest in that namespace), with its channel values,
   * metadata, parent config and pending writes; undefined when there is none or no `thread_id`.
   */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = optionalId(config.configurable?.thread_id, 'thread_id');
    if (threadId === undefined) return undefined;
    const checkpointNs = namespaceOf(config);
    const checkpointId = optionalId(getCheckpointId(config) || undefined, 'checkpoint_id');
    const rows = await this.#read(threadId, () =>
      checkpointId === undefined
        ? runPrepared(this.#db, statements.latestCheckpoint, { thread: threadId, ns: checkpointNs })
        : runPrepared(this.#db, statements.checkpointById, {
            thread: threadId,
            ns: checkpointNs,
            id: checkpointId,
          }),
    );
    // What LangGraph reads here it usually extends and puts next: the base of its deltas.
    return (await this.#tuples(rows, true))[0];
  }

  /**
   * The checkpoints `config` selects (each of `thread_id`, `checkpoint_ns`, `checkpoint_id`
   * only when given), newest first: only those older than `before`'s checkpoint, whose
   * metadata has each of `filter`'s keys at an equal value, at most `limit`.
   */
  async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const { limit, before, filter } = options;
    if (limit !== undefined && !Number.isInteger(limit)) {
      throw new LangGraphError('invalid', `list: limit must be an integer, got ${String(limit)}`);
    }
    const configurable = config.configurable ?? {};
    const query = statements.listedCheckpoints({
      // An empty thread id lists every thread, as LangGraph's own savers do.
      threadId: optionalId(configurable.thread_id || undefined, 'thread_id'),
      checkpointNs: optionalId(configurable.checkpoint_ns ?? undefined, 'checkpoint_ns'),
      checkpointId: optionalId(configurable.checkpoint_id || undefined, 'checkpoint_id'),
      before: optionalId(before?.configurable?.checkpoint_id || undefined, 'before.checkpoint_id'),
      filter: filter ?? {},
      limit: limit === undefined ? undefined : Math.max(0, limit),
    });
    const rows = await this.#read(undefined, async () => rowsOf(await this.#db.execute(query)));
    yield* await this.#tuples(rows);
  }

  /**
   * Stores `checkpoint` under `config`'s thread and namespace, its parent being `config`'s
   * `checkpoint_id`, with the channel values `newVersions` names (the others are read from
   * the versions stored before); the same checkpoint id again replaces it. Returns the
   * config that names it.
   */
  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = requiredId(config.configurable?.thread_id, 'thread_id', 'put');
    const checkpointNs = namespaceOf(config);
    const parent = optionalId(config.configurable?.checkpoint_id || undefined, 'checkpoint_id');
    const checkpointId = requiredId(checkpoint.id, 'checkpoint.id', 'put');
    // The id is the row's key already; the values are rows of their own.
    const { channel_values: values, id: _id, ...stored } = checkpoint;
    // Sorted, so that two puts on one thread lock its values in the same order. A channel
    // cleared at its new version gets no row: read, it is absent either way.
    const changed = Object.entries(newVersions)
      .filter(([channel]) => channel in values)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([channel, version]) => ({
        channel,
        version: String(version),
        value: values[channel],
        delta: this.#bases.deltaOf(threadId, checkpointNs, channel, values[channel]),
      }));
    const write = async () => {
      const blobs = await Promise.all(
        changed.map(({ value, delta }) =>
          this.#dumpBlob(delta === undefined ? value : delta.items),
        ),
      );
      return this.#writes.write(threadId, 'checkpoint', statements.putCheckpoint, {
        thread: threadId,
        ns: checkpointNs,
        id: checkpointId,
        parent: parent ?? null,
        checkpoint: JSON.stringify(stored),
        metadata: await this.#metadataJson(metadata),
        channels: changed.map(({ channel }) => channel),
        versions: changed.map(({ version }) => version),
        types: blobs.map(([type]) => type),
        blobs: blobs.map(([, blob]) => statements.hexBytes(blob)),
        bases: changed.map(({ delta }) => delta?.base ?? null),
        commit: this.#commit,
      });
    };
    try {
      const missing = new Set((await write()).map((row) => String(row.channel)));
      if (missing.size > 0) {
        // A base deleted meanwhile (the thread deleted and written again): write them whole.
        for (const entry of changed) if (missing.has(entry.channel)) entry.delta = undefined;
        await write();
      }
    } catch (error) {
      this.#bases.forget(threadId);
      throw wrapDatabaseError(error, `writing a checkpoint of thread "${threadId}"`, threadId);
    }
    for (const { channel, version, value, delta } of changed) {
      this.#bases.remember(threadId, checkpointNs, channel, version, value, delta?.depth ?? 0);
    }
    return {
      configurable: {
        thread_id: threadId,
        checkpoint_ns: checkpointNs,
        checkpoint_id: checkpointId,
      },
    };
  }

  /**
   * Stores a task's pending writes against `config`'s checkpoint (`checkpoint_id` required):
   * a regular write already stored is kept, a special channel's (error, interrupt, resume,
   * scheduled) replaced.
   */
  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const threadId = requiredId(config.configurable?.thread_id, 'thread_id', 'putWrites');
    const checkpointNs = namespaceOf(config);
    const checkpointId = requiredId(
      config.configurable?.checkpoint_id,
      'checkpoint_id',
      'putWrites',
    );
    requiredId(taskId, 'taskId', 'putWrites');
    // One row per index: of two writes to one special channel, the later wins, as it would
    // written one after the other.
    const byIndex = new Map<number, PendingWrite>();
    writes.forEach((write, idx) => {
      byIndex.set(WRITES_IDX_MAP[write[0]] ?? idx, write);
    });
    const rows = [...byIndex];
    const dumped = await Promise.all(rows.map(([, [, value]]) => this.#dumpBlob(value)));
    try {
      await this.#writes.write(threadId, 'writes', statements.putWrites, {
        thread: threadId,
        ns: checkpointNs,
        id: checkpointId,
        task: taskId,
        path: taskPath ?? '',
        idxs: rows.map(([idx]) => idx),
        channels: rows.map(([, [channel]]) => channel),
        types: dumped.map(([type]) => type),
        blobs: dumped.map(([, blob]) => statements.hexBytes(blob)),
        commit: this.#commit,
      });
    } catch (error) {
      throw wrapDatabaseError(error, `writing the writes of task "${taskId}"`, threadId);
    }
  }

  /** Deletes the thread's checkpoints, channel values and writes, every namespace. */
  async deleteThread(threadId: string): Promise<void> {
    requiredId(threadId, 'threadId', 'deleteThread');
    this.#bases.forget(threadId);
    try {
      await runPrepared(this.#db, statements.deleteThread, { thread: threadId });
    } catch (error) {
      throw wrapDatabaseError(error, `deleting thread "${threadId}"`, threadId);
    }
  }

  /** A value as stored: the serializer's type and bytes, compressed when that is smaller. */
  async #dumpBlob(value: unknown): Promise<[string, Uint8Array]> {
    const [type, bytes] = await this.serde.dumpsTyped(value);
    return packBlob(type, bytes);
  }

  /** The value of a stored blob, as {@link #dumpBlob} was given it. */
  #loadBlob(type: unknown, blob: unknown): Promise<unknown> {
    return this.serde.loadsTyped(...unpackBlob(String(type), blob as Uint8Array));
  }

  /** The metadata as JSON text for its `jsonb` column, through the serializer. */
  async #metadataJson(metadata: CheckpointMetadata): Promise<string> {
    const [, bytes] = await this.serde.dumpsTyped(metadata);
    return decoder.decode(bytes);
  }

  async #read(
    threadId: string | undefined,
    read: () => Promise<PreparedRow[]>,
  ): Promise<PreparedRow[]> {
    try {
      return await retryRead(read);
    } catch (error) {
      const what = threadId === undefined ? 'listing checkpoints' : `reading thread "${threadId}"`;
      throw wrapDatabaseError(error, what, threadId);
    }
  }

  /** The tuples of {@link statements.checkpointRows}' rows, in their order. */
  async #tuples(rows: PreparedRow[], remember = false): Promise<CheckpointTuple[]> {
    const tuples: CheckpointTuple[] = [];
    const chains: Array<{ tuple: CheckpointTuple; channel: string; depth: number }> = [];
    const legacy: Array<{ tuple: CheckpointTuple; address: Address; parent: string }> = [];
    let current: CheckpointTuple | undefined;
    for (const row of rows) {
      const part = Number(row.part);
      if (part === 0) {
        const address = addressOf(row);
        const checkpoint = JSON.parse(String(row.b)) as Checkpoint;
        current = {
          config: configOf(address),
          checkpoint: { ...checkpoint, id: address.checkpointId, channel_values: {} },
          metadata: (await this.serde.loadsTyped('json', String(row.c))) as CheckpointMetadata,
          pendingWrites: [],
        };
        const parent = row.a == null ? undefined : String(row.a);
        if (parent !== undefined) {
          current.parentConfig = configOf({ ...address, checkpointId: parent });
          if (checkpoint.v < 4) legacy.push({ tuple: current, address, parent });
        }
        tuples.push(current);
      } else if (current !== undefined && part === 1) {
        if (row.b === 'empty') continue;
        const channel = String(row.a);
        const value = await this.#loadBlob(row.b, row.blob);
        const values = current.checkpoint.channel_values;
        const chain = chains.at(-1);
        if (chain?.tuple === current && chain.channel === channel) {
          // A delta: the items appended to the value before it (a loop: a spread of a long
          // delta would overflow the stack).
          const whole = values[channel] as unknown[];
          for (const item of value as unknown[]) whole.push(item);
          continue;
        }
        if (row.c != null) {
          throw new LangGraphError(
            'unavailable',
            `reading channel "${channel}" of thread "${current.config.configurable?.thread_id}": the version its delta extends is not stored`,
          );
        }
        values[channel] = value;
        chains.push({ tuple: current, channel, depth: -Number(row.idx) });
      } else if (current !== undefined) {
        const write: CheckpointPendingWrite = [
          String(row.a),
          String(row.b),
          await this.#loadBlob(row.c, row.blob),
        ];
        current.pendingWrites?.push(write);
      }
    }
    if (remember) {
      for (const { tuple, channel, depth } of chains) {
        const { thread_id, checkpoint_ns } = tuple.config.configurable ?? {};
        const { channel_values, channel_versions } = tuple.checkpoint;
        const version = String(channel_versions[channel]);
        this.#bases.remember(
          thread_id,
          checkpoint_ns,
          channel,
          version,
          channel_values[channel],
          depth,
        );
      }
    }
    if (legacy.length > 0) await this.#migratePendingSends(legacy);
    return tuples;
  }

  /**
   * A checkpoint older than format 4 kept its pending sends as its parent's TASKS writes:
   * they become its TASKS channel, at the newest of its versions, as LangGraph's savers do.
   */
  async #migratePendingSends(
    legacy: Array<{ tuple: CheckpointTuple; address: Address; parent: string }>,
  ): Promise<void> {
    for (const { tuple, address, parent } of legacy) {
      const rows = await this.#read(address.threadId, () =>
        runPrepared(this.#db, statements.pendingSends, {
          thread: address.threadId,
          ns: address.checkpointNs,
          ids: [parent],
          channel: TASKS,
        }),
      );
      if (rows.length === 0) continue;
      const checkpoint = tuple.checkpoint;
      checkpoint.channel_values[TASKS] = await Promise.all(
        rows.map((row) => this.#loadBlob(row.type, row.blob)),
      );
      const versions = Object.values(checkpoint.channel_versions);
      checkpoint.channel_versions[TASKS] =
        versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
    }
  }
}

function addressOf(row: PreparedRow): Address {
  return {
    threadId: String(row.thread_id),
    checkpointNs: String(row.checkpoint_ns),
    checkpointId: String(row.checkpoint_id),
  };
}

function configOf(address: Address): RunnableConfig {
  return {
    configurable: {
      thread_id: address.threadId,
      checkpoint_ns: address.checkpointNs,
      checkpoint_id: address.checkpointId,
    },
  };
}

/** The config's namespace, `''` (the root graph's) when it names none. */
function namespaceOf(config: RunnableConfig): string {
  return optionalId(config.configurable?.checkpoint_ns ?? undefined, 'checkpoint_ns') ?? '';
}

/** `value` when it is a string, undefined when absent; any other value is `invalid`. */
function optionalId(value: unknown, key: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new LangGraphError(
      'invalid',
      `configurable.${key} must be a string, got ${typeof value}: pass ids as strings`,
    );
  }
  return value;
}

/** `value` when it is a non-empty string; else `invalid`, naming the call and the key. */
function requiredId(value: unknown, key: string, call: string): string {
  const id = optionalId(value, key);
  if (id === undefined || id === '') {
    throw new LangGraphError(
      'invalid',
      `${call} needs ${key} (e.g. graph.invoke(input, { configurable: { thread_id: "t-1" } }))`,
    );
  }
  return id;
}
