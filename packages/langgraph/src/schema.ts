import { sql } from 'drizzle-orm';
import { customType, integer, json, jsonb, pgSchema, primaryKey, text } from 'drizzle-orm/pg-core';

/** The Postgres schema every table of this package lives in. */
export const langgraphSchema = pgSchema('x_langgraph');

// Ids compare by code point, as LangGraph compares them in JavaScript (`before`, the writes'
// order), whatever the database's default collation.
const id = customType<{ data: string }>({ dataType: () => 'text collate "C"' });
const bytes = customType<{ data: Uint8Array }>({ dataType: () => 'bytea' });

/**
 * One row per checkpoint: the checkpoint without its id (the row's key; earlier versions of
 * this package kept it in the JSON too) and without its channel values (those are
 * {@link checkpointBlobs}, shared by the checkpoints that did not change them) and its
 * metadata, `jsonb` so that `list` can filter on it.
 */
export const checkpoints = langgraphSchema.table(
  'checkpoints',
  {
    threadId: id('thread_id').notNull(),
    checkpointNs: id('checkpoint_ns').notNull().default(''),
    checkpointId: id('checkpoint_id').notNull(),
    parentCheckpointId: id('parent_checkpoint_id'),
    /** The checkpoint of a row written by an earlier version of this package, else null. */
    checkpoint: jsonb('checkpoint'),
    /** The checkpoint as its JSON text: a third smaller than `jsonb`, and read far less often. */
    checkpointJson: json('checkpoint_json'),
    metadata: jsonb('metadata').notNull().default(sql`'{}'::jsonb`),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.checkpointNs, t.checkpointId] })],
);

/**
 * One row per channel value and version of a thread's namespace, as the serializer wrote it
 * (Brotli-compressed when its type ends in `+br`). A channel cleared at a version has no row
 * (earlier versions of this package wrote one of `type` `empty` and no `blob`). A row with a
 * `base_version` holds only the items appended to that version's array (a delta); the value
 * is its base's with them at the end.
 */
export const checkpointBlobs = langgraphSchema.table(
  'checkpoint_blobs',
  {
    threadId: id('thread_id').notNull(),
    checkpointNs: id('checkpoint_ns').notNull().default(''),
    channel: text('channel').notNull(),
    version: text('version').notNull(),
    type: text('type').notNull(),
    blob: bytes('blob'),
    /** The version whose array this row's items extend, or null when `blob` is the whole value. */
    baseVersion: text('base_version'),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.checkpointNs, t.channel, t.version] })],
);

/**
 * The pending writes of a checkpoint: one row per task and write index (the special
 * channels' fixed negative indexes), with the task's path, which orders them.
 */
export const checkpointWrites = langgraphSchema.table(
  'checkpoint_writes',
  {
    threadId: id('thread_id').notNull(),
    checkpointNs: id('checkpoint_ns').notNull().default(''),
    checkpointId: id('checkpoint_id').notNull(),
    taskId: id('task_id').notNull(),
    idx: integer('idx').notNull(),
    taskPath: id('task_path').notNull().default(''),
    channel: text('channel').notNull(),
    type: text('type').notNull(),
    blob: bytes('blob').notNull(),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.checkpointNs, t.checkpointId, t.taskId, t.idx] })],
);
