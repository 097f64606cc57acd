import { sqlTargets } from '@internal/pg-test';
import type { RunnableConfig } from '@langchain/core/runnables';
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { migratedTables } from '../test/targets.js';
import { MAX_DELTAS } from './deltas.js';
import { PostgresCheckpointSaver } from './index.js';

const meta = { source: 'loop' as const, step: 0, parents: {} };

/** Puts a checkpoint whose one channel, `messages`, is `messages` at `version`. */
function putMessages(
  saver: PostgresCheckpointSaver,
  config: RunnableConfig,
  version: number,
  messages: unknown[],
  id?: string,
) {
  const checkpoint = {
    ...emptyCheckpoint(),
    ...(id === undefined ? {} : { id }),
    channel_values: { messages },
    channel_versions: { messages: version },
  };
  return saver.put(config, checkpoint, meta, { messages: version });
}

const message = (i: number) => ({ role: 'user', text: `message ${i} `.repeat(30) });

for (const t of await sqlTargets()) {
  describe.skipIf(t.skip)(t.kind, () => {
    const tables = migratedTables(t);

    /** The stored `messages` rows of `thread`: each version with the version it extends. */
    const stored = async (thread: string) =>
      rowsOf(
        await tables.db.execute(sql`select version, base_version as base from x_langgraph.checkpoint_blobs
          where thread_id = ${thread} and channel = 'messages' order by version::int`),
      ).map((row) => [Number(row.version), row.base === null ? null : Number(row.base)]);

    /** Each checkpoint's `messages` as a new saver (nothing remembered) reads it. */
    const read = async (configs: RunnableConfig[]) => {
      const fresh = new PostgresCheckpointSaver(tables.db);
      return Promise.all(
        configs.map(async (config) => (await fresh.getTuple(config))?.checkpoint.channel_values),
      );
    };

    it('an appended array is stored as the items after its base, and read back whole', async () => {
      const saver = new PostgresCheckpointSaver(tables.db);
      let config: RunnableConfig = { configurable: { thread_id: 'append' } };
      let messages: unknown[] = [];
      const configs: RunnableConfig[] = [];
      const expected: unknown[] = [];
      for (let version = 1; version <= 5; version++) {
        messages = [...messages, message(version), message(version + 100)];
        config = await putMessages(saver, config, version, messages);
        configs.push(config);
        expected.push({ messages });
      }
      expect(await stored('append')).toEqual([
        [1, null],
        [2, 1],
        [3, 2],
        [4, 3],
        [5, 4],
      ]);
      expect(await read(configs)).toEqual(expected);
      const listed = [];
      for await (const tuple of saver.list({ configurable: { thread_id: 'append' } }))
        listed.push(tuple.checkpoint.channel_values);
      expect(listed).toEqual([...expected].reverse());
    });

    it('a value that is not an append, and one after MAX_DELTAS deltas, is stored whole', async () => {
      const saver = new PostgresCheckpointSaver(tables.db);
      let config: RunnableConfig = { configurable: { thread_id: 'whole' } };
      const first = [message(1)];
      const values = [first, [...first, message(2)], [message(3)]];
      for (let i = 0; i <= MAX_DELTAS; i++) values.push([...(values.at(-1) ?? []), message(i)]);
      const configs: RunnableConfig[] = [];
      for (const [i, value] of values.entries()) {
        config = await putMessages(saver, config, i + 1, value);
        configs.push(config);
      }
      const whole = (await stored('whole')).filter(([, base]) => base === null);
      // Version 3 replaced the array; MAX_DELTAS deltas after it, the next is whole again.
      expect(whole.map(([version]) => version)).toEqual([1, 3, 3 + MAX_DELTAS + 1]);
      expect(await read(configs)).toEqual(values.map((messages) => ({ messages })));
    });

    it('a delta whose base was deleted meanwhile is written whole', async () => {
      const saver = new PostgresCheckpointSaver(tables.db);
      const first = [message(1)];
      const config = await putMessages(saver, { configurable: { thread_id: 'gone' } }, 1, first);
      await new PostgresCheckpointSaver(tables.db).deleteThread('gone');
      const again = await putMessages(saver, config, 2, [...first, message(2)]);
      expect(await stored('gone')).toEqual([[2, null]]);
      expect(await read([again])).toEqual([{ messages: [...first, message(2)] }]);
    });

    it('a value stored by the previous version is read, and is the base of the next delta', async () => {
      // As 0.1.x stored it: no base_version, the checkpoint as json text, the value as JSON.
      const messages = [message(1), message(2)];
      const checkpoint = { ...emptyCheckpoint(), channel_versions: { messages: 1 } };
      const { channel_values: _values, id, ...json } = checkpoint;
      await tables.db.execute(sql`insert into x_langgraph.checkpoints
        (thread_id, checkpoint_ns, checkpoint_id, checkpoint_json, metadata)
        values ('old', '', ${id}, ${JSON.stringify(json)}::json, ${JSON.stringify(meta)}::jsonb)`);
      await tables.db.execute(sql`insert into x_langgraph.checkpoint_blobs
        (thread_id, checkpoint_ns, channel, version, type, blob)
        values ('old', '', 'messages', '1', 'json', convert_to(${JSON.stringify(messages)}, 'UTF8'))`);
      const saver = new PostgresCheckpointSaver(tables.db);
      const tuple = await saver.getTuple({ configurable: { thread_id: 'old' } });
      const value = tuple?.checkpoint.channel_values.messages as unknown[];
      expect(value).toEqual(messages);
      const next = await putMessages(saver, tuple?.config ?? {}, 2, [...value, message(3)]);
      expect(await stored('old')).toEqual([
        [1, null],
        [2, 1],
      ]);
      expect(await read([next])).toEqual([{ messages: [...messages, message(3)] }]);
    });

    it('two savers writing one checkpoint and its writes at once store it once, as written', async () => {
      // Two clients' worth of savers: on the server their statements race on two connections.
      const savers = [
        new PostgresCheckpointSaver(tables.db),
        new PostgresCheckpointSaver(tables.db),
      ];
      let configs: RunnableConfig[] = savers.map(() => ({ configurable: { thread_id: 'race' } }));
      let messages: unknown[] = [];
      for (let version = 1; version <= 12; version++) {
        messages = [...messages, message(version)];
        const id = emptyCheckpoint().id;
        const value = messages;
        configs = await Promise.all(
          savers.map((saver, i) => putMessages(saver, configs[i] ?? {}, version, value, id)),
        );
        await Promise.all(
          savers.map((saver, i) =>
            saver.putWrites(configs[i] ?? {}, [['messages', [message(-version)]]], 'task'),
          ),
        );
        const tuple = await new PostgresCheckpointSaver(tables.db).getTuple(configs[0] ?? {});
        expect(tuple?.checkpoint.id).toBe(id);
        expect(tuple?.checkpoint.channel_values).toEqual({ messages });
        expect(tuple?.pendingWrites).toEqual([['task', 'messages', [message(-version)]]]);
      }
      const counts = rowsOf(
        await tables.db.execute(sql`select (select count(*) from x_langgraph.checkpoints)::int as checkpoints,
          (select count(*) from x_langgraph.checkpoint_blobs)::int as blobs,
          (select count(*) from x_langgraph.checkpoint_writes)::int as writes`),
      );
      expect(counts).toEqual([{ checkpoints: 12, blobs: 12, writes: 12 }]);
    });

    it('two savers sending a checkpoint and its writes in one turn, in opposite orders, store them once', async () => {
      // Each saver sends its two writes as one transaction; in opposite orders they may
      // deadlock on the server, and the loser's writes then run again one by one.
      const savers = [
        new PostgresCheckpointSaver(tables.db),
        new PostgresCheckpointSaver(tables.db),
      ];
      let parent: RunnableConfig = { configurable: { thread_id: 'turn' } };
      let messages: unknown[] = [];
      for (let version = 1; version <= 6; version++) {
        messages = [...messages, message(version)];
        const id = emptyCheckpoint().id;
        const value = messages;
        const config = {
          configurable: { thread_id: 'turn', checkpoint_ns: '', checkpoint_id: id },
        };
        const write = (saver: PostgresCheckpointSaver) =>
          saver.putWrites(config, [['messages', [message(-version)]]], 'task');
        const [first, second] = savers as [PostgresCheckpointSaver, PostgresCheckpointSaver];
        const from = parent;
        await Promise.all([
          putMessages(first, from, version, value, id),
          write(first),
          write(second),
          putMessages(second, from, version, value, id),
        ]);
        const tuple = await new PostgresCheckpointSaver(tables.db).getTuple(config);
        expect(tuple?.checkpoint.channel_values).toEqual({ messages });
        expect(tuple?.pendingWrites).toEqual([['task', 'messages', [message(-version)]]]);
        parent = config;
      }
    });
  });
}
