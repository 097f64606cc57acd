import { sqlTargets } from '@internal/pg-test';
import { HumanMessage } from '@langchain/core/messages';
import { Annotation, Command, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import { ERROR, emptyCheckpoint, JsonPlusSerializer, uuid6 } from '@langchain/langgraph-checkpoint';
import { rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { migratedTables } from '../test/targets.js';
import { type LangGraphDatabase, LangGraphError, PostgresCheckpointSaver } from './index.js';

const State = Annotation.Root({
  answers: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

/** A graph whose one node asks through `interrupt()` and records the answer. */
function askingGraph(checkpointer: PostgresCheckpointSaver) {
  return new StateGraph(State)
    .addNode('ask', () => ({ answers: [String(interrupt({ question: 'Which city?' }))] }))
    .addEdge(START, 'ask')
    .addEdge('ask', END)
    .compile({ checkpointer });
}

const meta = { source: 'input' as const, step: -1, parents: {} };

for (const t of await sqlTargets()) {
  describe.skipIf(t.skip)(t.kind, () => {
    const tables = migratedTables(t);

    it('a graph stopped at interrupt() is resumed by another saver on the same database', async () => {
      const config = { configurable: { thread_id: 'trip-1' } };
      const asked = await askingGraph(new PostgresCheckpointSaver(tables.db)).invoke({}, config);
      const pause = (asked as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__;
      expect(pause?.[0]?.value).toEqual({ question: 'Which city?' });
      // A new saver (as after a restart) finds the pause and resumes it once.
      const graph = askingGraph(new PostgresCheckpointSaver(tables.db));
      expect((await graph.getState(config)).next).toEqual(['ask']);
      const done = await graph.invoke(new Command({ resume: 'Lisbon' }), config);
      expect(done.answers).toEqual(['Lisbon']);
      expect((await graph.getState(config)).next).toEqual([]);
      const history = [];
      for await (const state of graph.getStateHistory(config)) history.push(state);
      expect(history.length).toBeGreaterThanOrEqual(3);
    });

    it('a regular write already stored is kept, a special channel’s is replaced', async () => {
      const saver = new PostgresCheckpointSaver(tables.db);
      const config = await saver.put(
        { configurable: { thread_id: 'w' } },
        emptyCheckpoint(),
        meta,
        {},
      );
      await saver.putWrites(
        config,
        [
          ['animals', 'dog'],
          [ERROR, 'first'],
        ],
        'task',
      );
      await saver.putWrites(
        config,
        [
          ['animals', 'cat'],
          [ERROR, 'second'],
        ],
        'task',
      );
      const tuple = await saver.getTuple(config);
      expect(tuple?.pendingWrites).toEqual([
        ['task', ERROR, 'second'],
        ['task', 'animals', 'dog'],
      ]);
    });

    it('large values and writes are stored compressed and read back as they were', async () => {
      const saver = new PostgresCheckpointSaver(tables.db);
      const notes = Array.from({ length: 200 }, (_, i) => `note ${i}: the agent keeps notes`);
      const checkpoint = { ...emptyCheckpoint(), channel_values: { notes, tiny: 'x' } };
      checkpoint.channel_versions = { notes: 1, tiny: 1 };
      const config = await saver.put({ configurable: { thread_id: 'big' } }, checkpoint, meta, {
        notes: 1,
        tiny: 1,
      });
      await saver.putWrites(config, [['notes', notes]], 'task');
      const tuple = await saver.getTuple(config);
      expect(tuple?.checkpoint.channel_values).toEqual({ notes, tiny: 'x' });
      expect(tuple?.pendingWrites).toEqual([['task', 'notes', notes]]);
      const stored = rowsOf(
        await tables.db.execute(sql`select channel, type from x_langgraph.checkpoint_blobs
          union all select channel, type from x_langgraph.checkpoint_writes order by 1, 2`),
      );
      expect(stored).toEqual([
        { channel: 'notes', type: 'json+br' },
        { channel: 'notes', type: 'json+br' },
        { channel: 'tiny', type: 'json' },
      ]);
    });

    it('values are stored as JsonPlusSerializer stores them, and each saver reads the other’s', async () => {
      // Plain JSON and what only JsonPlusSerializer writes, as values, writes and metadata.
      const values: Record<string, unknown> = {
        plain: {
          text: 'héllo ✓ "quoted"',
          n: [1, 2.5, -0, 1e21],
          nested: { ok: true, none: null },
        },
        undefinedInside: { a: undefined, b: [undefined, 1] },
        set: new Set(['a']),
        map: new Map([['k', 1]]),
        date: new Date(0),
        notFinite: [Number.NaN, Number.POSITIVE_INFINITY],
        message: new HumanMessage('hi'),
        bytes: new Uint8Array([1, 2]),
        long: Array.from({ length: 50 }, (_, i) => ({ role: 'user', text: `message ${i}` })),
      };
      const versions = Object.fromEntries(Object.keys(values).map((channel) => [channel, 1]));
      const checkpoint = {
        ...emptyCheckpoint(),
        channel_values: values,
        channel_versions: versions,
      };
      const savers = {
        ours: new PostgresCheckpointSaver(tables.db),
        theirs: new PostgresCheckpointSaver(tables.db, { serde: new JsonPlusSerializer() }),
      };
      const metadata = { ...meta, asked: { plain: values.plain, inside: values.undefinedInside } };
      for (const [thread, saver] of Object.entries(savers)) {
        const config = await saver.put(
          { configurable: { thread_id: thread } },
          checkpoint,
          metadata,
          versions,
        );
        await saver.putWrites(config, Object.entries(values), 'task');
      }
      const stored = async (thread: string) =>
        rowsOf(
          await tables.db.execute(sql`select channel, type, encode(blob, 'hex') as blob
            from x_langgraph.checkpoint_blobs where thread_id = ${thread}
            union all select channel, type, encode(blob, 'hex') from x_langgraph.checkpoint_writes
            where thread_id = ${thread}
            union all select 'metadata', '', metadata::text from x_langgraph.checkpoints
            where thread_id = ${thread} order by 1, 2, 3`),
        );
      const ours = await stored('ours');
      expect(ours).toHaveLength(2 * Object.keys(values).length + 1);
      expect(ours).toEqual(await stored('theirs'));
      const expected = await savers.theirs.getTuple({ configurable: { thread_id: 'theirs' } });
      for (const saver of Object.values(savers)) {
        const read = await saver.getTuple({ configurable: { thread_id: 'ours' } });
        expect(read?.checkpoint.channel_values).toEqual(expected?.checkpoint.channel_values);
        expect(read?.pendingWrites).toEqual(expected?.pendingWrites);
        expect(read?.metadata).toEqual(expected?.metadata);
      }
      expect(expected?.checkpoint.channel_values.message).toBeInstanceOf(HumanMessage);
    });

    it('a checkpoint and values stored by an earlier version are read as they were', async () => {
      // As 0.1.0 stored them: the checkpoint (with its id) as jsonb, values uncompressed, a
      // cleared channel as a row of type `empty`.
      const notes = JSON.stringify(['a', 'b'.repeat(300)]);
      const stored = { ...emptyCheckpoint(), channel_versions: { notes: 1, cleared: 1 } };
      const { channel_values: _values, ...checkpoint } = stored;
      await tables.db.execute(sql`insert into x_langgraph.checkpoints
        (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata)
        values ('old', '', ${stored.id}, ${JSON.stringify(checkpoint)}::jsonb, ${JSON.stringify(meta)}::jsonb)`);
      await tables.db.execute(sql`insert into x_langgraph.checkpoint_blobs
        (thread_id, checkpoint_ns, channel, version, type, blob)
        values ('old', '', 'notes', '1', 'json', convert_to(${notes}, 'UTF8')),
          ('old', '', 'cleared', '1', 'empty', null)`);
      const saver = new PostgresCheckpointSaver(tables.db);
      const tuple = await saver.getTuple({ configurable: { thread_id: 'old' } });
      expect(tuple?.checkpoint).toEqual({
        ...stored,
        channel_values: { notes: JSON.parse(notes) },
      });
      expect(tuple?.metadata).toEqual(meta);
      // Written again, it is replaced in the current form.
      await saver.put(tuple?.config ?? {}, { ...stored, ts: 'later' }, meta, {});
      const again = await saver.getTuple({ configurable: { thread_id: 'old' } });
      expect(again?.checkpoint.ts).toBe('later');
      expect(again?.checkpoint.id).toBe(stored.id);
    });

    it('pending writes come in LangGraph’s order: task path, then task id, by code point', async () => {
      const saver = new PostgresCheckpointSaver(tables.db);
      const config = await saver.put(
        { configurable: { thread_id: 'o' } },
        emptyCheckpoint(),
        meta,
        {},
      );
      await saver.putWrites(config, [['c', 1]], 'b', '~1');
      await saver.putWrites(config, [['c', 2]], 'a', '~1');
      await saver.putWrites(config, [['c', 3]], 'Z', '~0');
      await saver.putWrites(config, [['c', 4]], 'é', '');
      const tuple = await saver.getTuple(config);
      expect(tuple?.pendingWrites?.map(([task]) => task)).toEqual(['é', 'Z', 'a', 'b']);
    });

    it('list filters metadata key by key, nested values included, newest first', async () => {
      const saver = new PostgresCheckpointSaver(tables.db);
      const ids = [uuid6(1), uuid6(1), uuid6(1)];
      for (const [i, id] of ids.entries()) {
        await saver.put(
          { configurable: { thread_id: 'l' } },
          { ...emptyCheckpoint(), id },
          { ...meta, step: i, parents: i === 2 ? { '': 'x' } : {} },
          {},
        );
      }
      const listed = async (filter: Record<string, unknown>) => {
        const found = [];
        for await (const tuple of saver.list({ configurable: { thread_id: 'l' } }, { filter }))
          found.push(tuple.checkpoint.id);
        return found;
      };
      expect(await listed({})).toEqual([...ids].reverse());
      expect(await listed({ step: 1 })).toEqual([ids[1]]);
      expect(await listed({ parents: { '': 'x' } })).toEqual([ids[2]]);
      // Equality, not containment: `{}` is not every object.
      expect(await listed({ parents: {} })).toEqual([ids[1], ids[0]]);
    });

    it('deleteThread removes every namespace of the thread and nothing of another', async () => {
      const saver = new PostgresCheckpointSaver(tables.db);
      for (const [thread_id, checkpoint_ns] of [
        ['d', ''],
        ['d', 'sub'],
        ['e', ''],
      ] as const) {
        const config = await saver.put(
          { configurable: { thread_id, checkpoint_ns } },
          { ...emptyCheckpoint(), channel_versions: { c: 1 }, channel_values: { c: 'v' } },
          meta,
          { c: 1 },
        );
        await saver.putWrites(config, [['c', 'w']], 'task');
      }
      await saver.deleteThread('d');
      const counts = async (table: string) =>
        (await tables.db.execute(sql.raw(`select thread_id from x_langgraph.${table}`))) as unknown;
      for (const table of ['checkpoints', 'checkpoint_blobs', 'checkpoint_writes']) {
        const rows = await counts(table);
        const list = Array.isArray(rows) ? rows : (rows as { rows: unknown[] }).rows;
        expect(list).toEqual([{ thread_id: 'e' }]);
      }
    });

    it('a put in a caller’s transaction that rolls back leaves nothing', async () => {
      await tables.db
        .transaction(async (tx) => {
          await new PostgresCheckpointSaver(tx).put(
            { configurable: { thread_id: 'tx' } },
            emptyCheckpoint(),
            meta,
            {},
          );
          throw new Error('roll back');
        })
        .catch(() => {});
      expect(
        await new PostgresCheckpointSaver(tables.db).getTuple({
          configurable: { thread_id: 'tx' },
        }),
      ).toBeUndefined();
    });

    it('synchronousCommit: false stores what it is given, and leaves a caller’s transaction as it was', async () => {
      const graph = askingGraph(
        new PostgresCheckpointSaver(tables.db, { synchronousCommit: false }),
      );
      const config = { configurable: { thread_id: 'async-1' } };
      await graph.invoke({}, config);
      const done = await graph.invoke(new Command({ resume: 'Porto' }), config);
      expect(done.answers).toEqual(['Porto']);
      const setting = await tables.db.transaction(async (tx) => {
        const saver = new PostgresCheckpointSaver(tx, { synchronousCommit: false });
        const stored = await saver.put(
          { configurable: { thread_id: 'async-2' } },
          emptyCheckpoint(),
          meta,
          {},
        );
        await saver.putWrites(stored, [['c', 1]], 'task');
        return rowsOf(await tx.execute(sql`select current_setting('synchronous_commit') as s`));
      });
      expect(setting).toEqual([{ s: 'on' }]);
    });

    it('writes sent while one is in flight go out together, and each settles on its own', async () => {
      const saver = new PostgresCheckpointSaver(tables.db);
      const config = await saver.put(
        { configurable: { thread_id: 'batch' } },
        emptyCheckpoint(),
        meta,
        {},
      );
      // Sent in one turn, the four go as one transaction, which the refused metadata fails:
      // run again one by one, only that put fails.
      const sent = [
        saver.putWrites(config, [['c', 1]], 'a'),
        saver.putWrites(config, [['c', 2]], 'b'),
        saver.put(config, emptyCheckpoint(), { ...meta, note: 'a\u0000b' } as never, {}),
        saver.putWrites(config, [['c', 3]], 'c'),
      ];
      const settled = await Promise.allSettled(sent);
      expect(settled.map((s) => s.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
      ]);
      const refused = settled[2] as PromiseRejectedResult;
      expect(LangGraphError.hasCode(refused.reason, 'invalid')).toBe(true);
      const tuple = await saver.getTuple(config);
      expect(tuple?.pendingWrites).toEqual([
        ['a', 'c', 1],
        ['b', 'c', 2],
        ['c', 'c', 3],
      ]);
    });

    it('bad ids and values the database refuses are invalid, and change nothing', async () => {
      const saver = new PostgresCheckpointSaver(tables.db);
      const refused = async (call: Promise<unknown>) => {
        const error = await call.catch((e: unknown) => e);
        expect(LangGraphError.hasCode(error, 'invalid')).toBe(true);
        expect((error as Error).message).toMatch(/^\[@x\/langgraph\] /);
      };
      await refused(saver.put({ configurable: { thread_id: 7 } }, emptyCheckpoint(), meta, {}));
      await refused(saver.put({ configurable: { thread_id: '' } }, emptyCheckpoint(), meta, {}));
      await refused(saver.putWrites({ configurable: { thread_id: 'b' } }, [['c', 1]], 'task'));
      await refused(
        saver.put(
          { configurable: { thread_id: 'b' } },
          emptyCheckpoint(),
          { ...meta, note: 'a\u0000b' } as never,
          {},
        ),
      );
      expect(await saver.getTuple({ configurable: { thread_id: 'b' } })).toBeUndefined();
    });
  });
}

describe('database failures', () => {
  it('tables that were never migrated are unavailable, saying to run migrate(db)', async () => {
    const [pglite] = await sqlTargets();
    const target = await pglite?.open();
    if (target === undefined) throw new Error('no PGlite target');
    try {
      const error = await new PostgresCheckpointSaver(target.db)
        .getTuple({ configurable: { thread_id: 't' } })
        .catch((e: unknown) => e);
      expect(LangGraphError.hasCode(error, 'unavailable')).toBe(true);
      expect((error as LangGraphError).sqlState).toBe('42P01');
      expect((error as Error).message).toContain('run migrate(db) first');
    } finally {
      await target.close();
    }
  });

  it('an unreachable server is unavailable, with the driver error as cause', async () => {
    const client = postgres('postgres://postgres@127.0.0.1:1/none', { connect_timeout: 2, max: 1 });
    const saver = new PostgresCheckpointSaver(drizzle({ client }) as unknown as LangGraphDatabase);
    try {
      for (const call of [
        () => saver.getTuple({ configurable: { thread_id: 't' } }),
        () => saver.put({ configurable: { thread_id: 't' } }, emptyCheckpoint(), meta, {}),
        () => saver.deleteThread('t'),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(LangGraphError.hasCode(error, 'unavailable')).toBe(true);
        expect((error as Error).cause).toBeDefined();
      }
    } finally {
      await client.end({ timeout: 1 });
    }
  });
});
