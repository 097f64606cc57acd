// Every statement of the saver, by name. Each call LangGraph makes is one statement, so it
// needs no transaction: `put` writes the new channel values and the checkpoint in one
// INSERT with a data-modifying CTE, `putWrites` all of a task's writes in one INSERT, and a
// read returns a checkpoint with its values and pending writes as rows of one SELECT.

import { prepareOnce } from '@x/postgres-kit';
import { type SQL, sql } from 'drizzle-orm';
import { checkpointBlobs, checkpoints, checkpointWrites } from './schema.js';

const p = (name: string) => sql.placeholder(name);

/**
 * Bytes as bytea's hex text (`\\x...`), null for none: an array parameter of strings goes
 * through postgres.js and PGlite alike, where an array of buffers would be sent as one bytea.
 */
export function hexBytes(bytes: Uint8Array | null): string | null {
  return bytes === null
    ? null
    : `\\x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;
}

/**
 * The rows of the checkpoints `selected` (a query of the `checkpoints` table): per
 * checkpoint one row of `part` 0 (`a` its parent's id, `b` the checkpoint's JSON, `c` its
 * metadata's JSON), rows of `part` 1 per channel value at its version (`a` the channel, `b`
 * the serializer's type, `c` the base version of a delta, `blob`: its last whole value
 * first, then the deltas after it, oldest first), one of `part` 2 per pending write (`a` the
 * task, `b` the channel, `c` the type, `d` the task's path, `idx`, `blob`); newest
 * checkpoint first, its writes in LangGraph's order (task path, task id, index, by code point).
 */
export function checkpointRows(selected: SQL): SQL {
  // A UNION orders by result columns only: the explicit collations of the first branch
  // make `a` and `d` compare by code point in every branch. A delta's chain is walked back
  // to its whole value; `idx` (minus the depth) puts that first.
  return sql`with recursive cp as (${selected}),
chain as (
  select cp.thread_id, cp.checkpoint_ns, cp.checkpoint_id, bl.channel, bl.base_version, bl.type, bl.blob, 0 as depth
  from cp
  cross join lateral jsonb_each_text(cp.checkpoint -> 'channel_versions') as v
  join ${checkpointBlobs} bl on bl.thread_id = cp.thread_id and bl.checkpoint_ns = cp.checkpoint_ns
    and bl.channel = v.key and bl.version = v.value
  union all
  select c.thread_id, c.checkpoint_ns, c.checkpoint_id, bl.channel, bl.base_version, bl.type, bl.blob, c.depth + 1
  from chain c
  join ${checkpointBlobs} bl on bl.thread_id = c.thread_id and bl.checkpoint_ns = c.checkpoint_ns
    and bl.channel = c.channel and bl.version = c.base_version
)
select 0 as part, cp.thread_id, cp.checkpoint_ns, cp.checkpoint_id, cp.parent_checkpoint_id collate "C" as a,
  cp.checkpoint::text as b, cp.metadata::text as c, null::text collate "C" as d, null::int as idx, null::bytea as blob
from cp
union all
select 1, thread_id, checkpoint_ns, checkpoint_id, channel, type, base_version, null, -depth, blob
from chain
union all
select 2, cp.thread_id, cp.checkpoint_ns, cp.checkpoint_id, cw.task_id, cw.channel, cw.type, cw.task_path, cw.idx, cw.blob
from cp
join ${checkpointWrites} cw on cw.thread_id = cp.thread_id and cw.checkpoint_ns = cp.checkpoint_ns
  and cw.checkpoint_id = cp.checkpoint_id
order by checkpoint_id desc, thread_id, checkpoint_ns, part, d, a, idx`;
}

// A row keeps its checkpoint in one of two columns: `checkpoint_json`, or `checkpoint` when an
// earlier version of this package wrote it.
const columns = sql`select thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
  coalesce(checkpoint_json::jsonb, checkpoint) as checkpoint, metadata from ${checkpoints}`;

/** One checkpoint by id: `thread`, `ns`, `id`. */
export const checkpointById = prepareOnce(() =>
  checkpointRows(
    sql`${columns} where thread_id = ${p('thread')} and checkpoint_ns = ${p('ns')} and checkpoint_id = ${p('id')}`,
  ),
);

/** The newest checkpoint of a thread's namespace: `thread`, `ns`. */
export const latestCheckpoint = prepareOnce(() =>
  checkpointRows(
    sql`${columns} where thread_id = ${p('thread')} and checkpoint_ns = ${p('ns')} order by checkpoint_id desc limit 1`,
  ),
);

/**
 * The checkpoints `list` asks for, newest first: each condition only when given, the
 * metadata filter key by key (`metadata -> key = value`, so `{}` matches all).
 */
export function listedCheckpoints(query: {
  threadId: string | undefined;
  checkpointNs: string | undefined;
  checkpointId: string | undefined;
  before: string | undefined;
  filter: Record<string, unknown>;
  limit: number | undefined;
}): SQL {
  const where: SQL[] = [];
  if (query.threadId !== undefined) where.push(sql`thread_id = ${query.threadId}`);
  if (query.checkpointNs !== undefined) where.push(sql`checkpoint_ns = ${query.checkpointNs}`);
  if (query.checkpointId !== undefined) where.push(sql`checkpoint_id = ${query.checkpointId}`);
  if (query.before !== undefined) where.push(sql`checkpoint_id < ${query.before}`);
  for (const [key, value] of Object.entries(query.filter)) {
    if (value !== undefined)
      where.push(sql`metadata -> ${key}::text = ${JSON.stringify(value)}::jsonb`);
  }
  const filtered = where.length > 0 ? sql` where ${sql.join(where, sql` and `)}` : sql``;
  const limit = query.limit === undefined ? sql`` : sql` limit ${query.limit}`;
  return checkpointRows(
    sql`${columns}${filtered} order by checkpoint_id desc, thread_id, checkpoint_ns${limit}`,
  );
}

/**
 * One row that sets `synchronous_commit` for the statement's own transaction to `commit`
 * (`off`: asynchronous), or leaves it as it is when `commit` is null. In the insert's FROM:
 * a statement that inserts nothing (a checkpoint written again) may skip it and commit
 * synchronously, which is only slower.
 */
const commitMode = sql`(select set_config('synchronous_commit', coalesce(${p('commit')}::text, current_setting('synchronous_commit')), true)) as commit_mode`;

/**
 * Writes a checkpoint (`thread`, `ns`, `id`, `parent`, `checkpoint` and `metadata` as JSON
 * text) and the channel values it changed (the arrays `channels`, `versions`, `types`,
 * `blobs`, the blobs in bytea's hex text, as {@link hexBytes} writes them, and `bases`: the
 * version a delta extends, null for a whole value; `commit` as {@link commitMode} takes it);
 * a value already stored at its version is kept, a checkpoint written again is replaced.
 * Returns the channels whose base version is not stored (deleted meanwhile): then nothing is
 * written, and the caller writes those values whole. Plain inserts behind a `not exists`,
 * not `on conflict`: a speculative insert logs a second WAL record per row. Two writers
 * racing to insert the same row fail with a unique violation (`23505`) instead; the
 * statement run again keeps or replaces what the other wrote.
 */
export const putCheckpoint = prepareOnce(
  () => sql`with b as (
  select * from unnest(${p('channels')}::text[], ${p('versions')}::text[], ${p('types')}::text[], ${p('blobs')}::text[]::bytea[], ${p('bases')}::text[])
    as b(channel, version, type, blob, base)
), missing as (
  select b.channel from b
  where b.base is not null and not exists (select from ${checkpointBlobs} x where x.thread_id = ${p('thread')}
    and x.checkpoint_ns = ${p('ns')} and x.channel = b.channel and x.version = b.base)
), blobs as (
  insert into ${checkpointBlobs} (thread_id, checkpoint_ns, channel, version, type, blob, base_version)
  select ${p('thread')}, ${p('ns')}, b.channel, b.version, b.type, b.blob, b.base
  from b
  where not exists (select from missing) and not exists (select from ${checkpointBlobs} x
    where x.thread_id = ${p('thread')} and x.checkpoint_ns = ${p('ns')} and x.channel = b.channel
    and x.version = b.version)
), replaced as (
  update ${checkpoints} set parent_checkpoint_id = ${p('parent')}, checkpoint = null,
    checkpoint_json = ${p('checkpoint')}::json, metadata = ${p('metadata')}::jsonb
  where thread_id = ${p('thread')} and checkpoint_ns = ${p('ns')} and checkpoint_id = ${p('id')}
    and not exists (select from missing)
  returning checkpoint_id
), inserted as (
  insert into ${checkpoints} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint_json, metadata)
  select ${p('thread')}, ${p('ns')}, ${p('id')}, ${p('parent')}, ${p('checkpoint')}::json, ${p('metadata')}::jsonb
  from ${commitMode}
  where not exists (select from replaced) and not exists (select from missing)
)
select channel from missing`,
);

/**
 * Writes a task's pending writes (`thread`, `ns`, `id`, `task`, `path`; the arrays `idxs`,
 * `channels`, `types`, `blobs` in hex text; `commit`): a regular write (index ≥ 0) already stored is
 * kept, as LangGraph replays a task's writes; a special channel's (negative index) is
 * replaced. Inserts as {@link putCheckpoint}'s: no speculative insert, `23505` on a race.
 */
export const putWrites = prepareOnce(
  () => sql`with w as (
  select * from unnest(${p('idxs')}::int[], ${p('channels')}::text[], ${p('types')}::text[], ${p('blobs')}::text[]::bytea[])
    as w(idx, channel, type, blob)
), replaced as (
  update ${checkpointWrites} cw set task_path = ${p('path')}, channel = w.channel, type = w.type, blob = w.blob
  from w
  where w.idx < 0 and cw.thread_id = ${p('thread')} and cw.checkpoint_ns = ${p('ns')}
    and cw.checkpoint_id = ${p('id')} and cw.task_id = ${p('task')} and cw.idx = w.idx
)
insert into ${checkpointWrites}
  (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, blob)
select ${p('thread')}, ${p('ns')}, ${p('id')}, ${p('task')}, w.idx, ${p('path')}, w.channel, w.type, w.blob
from w, ${commitMode}
where not exists (select from ${checkpointWrites} x where x.thread_id = ${p('thread')}
  and x.checkpoint_ns = ${p('ns')} and x.checkpoint_id = ${p('id')} and x.task_id = ${p('task')}
  and x.idx = w.idx)`,
);

/** Deletes every checkpoint, value and write of `thread`, all namespaces. */
export const deleteThread = prepareOnce(
  () => sql`with writes as (delete from ${checkpointWrites} where thread_id = ${p('thread')}),
  blobs as (delete from ${checkpointBlobs} where thread_id = ${p('thread')})
delete from ${checkpoints} where thread_id = ${p('thread')}`,
);

/**
 * The writes to `channel` (LangGraph's TASKS) of the checkpoints `ids` of a thread's
 * namespace, in LangGraph's order: the pending sends a checkpoint older than format 4 kept
 * in its parent's writes.
 */
export const pendingSends = prepareOnce(
  () => sql`select checkpoint_id, type, blob from ${checkpointWrites}
where thread_id = ${p('thread')} and checkpoint_ns = ${p('ns')} and checkpoint_id = any(${p('ids')}::text[])
  and channel = ${p('channel')}
order by checkpoint_id, task_path, task_id, idx`,
);
