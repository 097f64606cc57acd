import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_CHECKPOINT_BYTES, type SessionCheckpoint } from '../checkpoint.js';
import type { CheckpointStore } from '../checkpoint-store.js';
import { SessionError, type SessionErrorCode } from '../errors.js';
import { sampleCheckpoint } from './sample.js';

/** What {@link describeCheckpointStore} needs to test an adapter. */
export interface CheckpointStoreSuiteOptions<S extends CheckpointStore = CheckpointStore> {
  /** Shown in the test names. */
  name: string;
  /** A fresh, empty store for one test. */
  create: () => S | Promise<S>;
  /** Releases what `create` opened. */
  destroy?: (store: S) => void | Promise<void>;
  /**
   * A second handle on the SAME storage as `store` (another client, another instance), for
   * the two-writer tests. Default: the same object, called concurrently.
   */
  peer?: (store: S) => CheckpointStore | Promise<CheckpointStore>;
}

async function codeOf(promise: Promise<unknown>): Promise<SessionErrorCode | 'ok'> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (SessionError.is(error)) return error.code;
    throw error;
  }
}

/**
 * Registers the whole {@link CheckpointStore} contract as vitest tests: create/update/
 * delete/list, optimistic concurrency (stale, create-over-existing, concurrent writers:
 * exactly one wins), revisions that never repeat across delete, validation before writing,
 * unsafe ids, copies on read. Call it at the top level of a test file.
 *
 * @example
 * import { describeCheckpointStore } from '@x/session/testing';
 * describeCheckpointStore({ name: 'my store', create: () => new MyStore(), destroy: (s) => s.close() });
 */
export function describeCheckpointStore<S extends CheckpointStore>(
  options: CheckpointStoreSuiteOptions<S>,
): void {
  describe(`CheckpointStore contract: ${options.name}`, () => {
    let store: S;
    let peer: CheckpointStore;
    beforeEach(async () => {
      store = await options.create();
      peer = options.peer === undefined ? store : await options.peer(store);
    });
    afterEach(async () => {
      await options.destroy?.(store);
    });

    it('get of an unknown thread is undefined and list is empty', async () => {
      expect(await store.get('nobody')).toBeUndefined();
      expect(await store.list()).toEqual([]);
    });

    it('put creates, get returns an equal checkpoint with the returned revision', async () => {
      const checkpoint = sampleCheckpoint(1);
      const revision = await store.put('t-1', checkpoint);
      expect(Number.isInteger(revision) && revision >= 1).toBe(true);
      const stored = await store.get('t-1');
      expect(stored).toEqual({ threadId: 't-1', revision, checkpoint });
    });

    it('put with the revision read replaces and returns a greater revision', async () => {
      const first = await store.put('t-1', sampleCheckpoint(1), { expectedRevision: null });
      const second = await store.put('t-1', sampleCheckpoint(2), { expectedRevision: first });
      expect(second).toBeGreaterThan(first);
      expect((await store.get('t-1'))?.checkpoint).toEqual(sampleCheckpoint(2));
    });

    it('a stale revision is a conflict and changes nothing', async () => {
      const first = await store.put('t-1', sampleCheckpoint(1));
      const second = await store.put('t-1', sampleCheckpoint(2), { expectedRevision: first });
      let error: unknown;
      try {
        await store.put('t-1', sampleCheckpoint(3), { expectedRevision: first });
      } catch (caught) {
        error = caught;
      }
      expect(SessionError.hasCode(error, 'conflict')).toBe(true);
      expect((error as SessionError).details).toMatchObject({
        threadId: 't-1',
        expectedRevision: first,
        actualRevision: second,
      });
      expect(await store.get('t-1')).toEqual({
        threadId: 't-1',
        revision: second,
        checkpoint: sampleCheckpoint(2),
      });
    });

    it('create over an existing checkpoint is a conflict', async () => {
      const revision = await store.put('t-1', sampleCheckpoint(1));
      expect(await codeOf(store.put('t-1', sampleCheckpoint(2)))).toBe('conflict');
      expect(await codeOf(store.put('t-1', sampleCheckpoint(2), { expectedRevision: null }))).toBe(
        'conflict',
      );
      expect((await store.get('t-1'))?.revision).toBe(revision);
    });

    it('update of a thread that does not exist is a conflict', async () => {
      expect(await codeOf(store.put('t-1', sampleCheckpoint(1), { expectedRevision: 1 }))).toBe(
        'conflict',
      );
      expect(await store.get('t-1')).toBeUndefined();
    });

    it('two writers with the same revision: exactly one wins, the other gets conflict', async () => {
      const base = await store.put('t-1', sampleCheckpoint(0));
      const results = await Promise.allSettled([
        store.put('t-1', sampleCheckpoint(1), { expectedRevision: base }),
        peer.put('t-1', sampleCheckpoint(2), { expectedRevision: base }),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(SessionError.hasCode((lost[0] as PromiseRejectedResult).reason, 'conflict')).toBe(
        true,
      );
      const winner = results[0]?.status === 'fulfilled' ? 1 : 2;
      const stored = await peer.get('t-1');
      expect(stored?.revision).toBe((won[0] as PromiseFulfilledResult<number>).value);
      expect(stored?.checkpoint).toEqual(sampleCheckpoint(winner));
    });

    it('two creators of one thread: exactly one wins', async () => {
      const results = await Promise.allSettled([
        store.put('t-new', sampleCheckpoint(1)),
        peer.put('t-new', sampleCheckpoint(2)),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(SessionError.hasCode(lost.reason, 'conflict')).toBe(true);
    });

    it('many concurrent writers over many rounds: one winner per revision, no lost update', async () => {
      let revision = await store.put('t-race', sampleCheckpoint(0));
      for (let round = 0; round < 5; round++) {
        const writers = Array.from({ length: 6 }, (_, i) =>
          (i % 2 === 0 ? store : peer).put('t-race', sampleCheckpoint(round * 10 + i), {
            expectedRevision: revision,
          }),
        );
        const results = await Promise.allSettled(writers);
        const won = results.flatMap((r, i) =>
          r.status === 'fulfilled' ? [{ i, revision: r.value }] : [],
        );
        expect(won).toHaveLength(1);
        for (const r of results) {
          if (r.status === 'rejected')
            expect(SessionError.hasCode(r.reason, 'conflict')).toBe(true);
        }
        const stored = await store.get('t-race');
        expect(stored?.revision).toBe(won[0]?.revision);
        expect(stored?.checkpoint).toEqual(sampleCheckpoint(round * 10 + (won[0]?.i ?? -1)));
        revision = won[0]?.revision ?? -1;
      }
    });

    it('delete removes; a second delete is false; list forgets it', async () => {
      await store.put('t-1', sampleCheckpoint(1));
      await store.put('t-2', sampleCheckpoint(2));
      expect(await store.delete('t-1')).toBe(true);
      expect(await store.get('t-1')).toBeUndefined();
      expect(await store.delete('t-1')).toBe(false);
      expect(await store.delete('never')).toBe(false);
      expect((await store.list()).map((s) => s.threadId)).toEqual(['t-2']);
    });

    it('delete with a stale expected revision is a conflict and deletes nothing', async () => {
      const first = await store.put('t-1', sampleCheckpoint(1));
      const second = await store.put('t-1', sampleCheckpoint(2), { expectedRevision: first });
      expect(await codeOf(store.delete('t-1', { expectedRevision: first }))).toBe('conflict');
      expect((await store.get('t-1'))?.revision).toBe(second);
      expect(await store.delete('t-1', { expectedRevision: second })).toBe(true);
    });

    it('revisions never repeat across delete: a revision read before the delete stays stale', async () => {
      const first = await store.put('t-1', sampleCheckpoint(1));
      await store.delete('t-1');
      const again = await store.put('t-1', sampleCheckpoint(2), { expectedRevision: null });
      expect(again).toBeGreaterThan(first);
      expect(await codeOf(store.put('t-1', sampleCheckpoint(3), { expectedRevision: first }))).toBe(
        'conflict',
      );
      expect((await store.get('t-1'))?.checkpoint).toEqual(sampleCheckpoint(2));
    });

    it('list gives live threads ordered by id with their revisions', async () => {
      const b = await store.put('b', sampleCheckpoint(1));
      const a = await store.put('a', sampleCheckpoint(2));
      const c = await store.put('c.1', sampleCheckpoint(3));
      expect(await store.list()).toEqual([
        { threadId: 'a', revision: a },
        { threadId: 'b', revision: b },
        { threadId: 'c.1', revision: c },
      ]);
    });

    it('threads are independent', async () => {
      const a = await store.put('a', sampleCheckpoint(1));
      await store.put('b', sampleCheckpoint(2));
      await store.put('a', sampleCheckpoint(3), { expectedRevision: a });
      expect((await store.get('b'))?.checkpoint).toEqual(sampleCheckpoint(2));
    });

    it.each(['', '.', '..', '../x', 'a/b', 'a\\b', '.hidden', 'x'.repeat(201), 'a b', 'nul\u0000'])(
      'refuses the unsafe thread id %j everywhere with unsafe_id',
      async (id) => {
        expect(await codeOf(store.get(id))).toBe('unsafe_id');
        expect(await codeOf(store.put(id, sampleCheckpoint(1)))).toBe('unsafe_id');
        expect(await codeOf(store.delete(id))).toBe('unsafe_id');
        expect(await store.list()).toEqual([]);
      },
    );

    it('an invalid checkpoint is refused with invalid and nothing is written', async () => {
      const bad = {
        ...sampleCheckpoint(1),
        window: [{ role: 'robot', content: [] }],
      } as unknown as SessionCheckpoint;
      expect(await codeOf(store.put('t-1', bad))).toBe('invalid');
      expect(await store.get('t-1')).toBeUndefined();
      expect(await store.list()).toEqual([]);
    });

    it('a checkpoint of a newer version is refused with unsupported_version', async () => {
      const newer = { ...sampleCheckpoint(1), version: 99 } as unknown as SessionCheckpoint;
      expect(await codeOf(store.put('t-1', newer))).toBe('unsupported_version');
      expect(await store.get('t-1')).toBeUndefined();
    });

    it('a bad expectedRevision is invalid', async () => {
      expect(await codeOf(store.put('t-1', sampleCheckpoint(1), { expectedRevision: 0 }))).toBe(
        'invalid',
      );
      expect(await codeOf(store.put('t-1', sampleCheckpoint(1), { expectedRevision: 1.5 }))).toBe(
        'invalid',
      );
    });

    it('stored data is a copy: mutating what was put or got changes nothing', async () => {
      const checkpoint = sampleCheckpoint(1);
      await store.put('t-1', checkpoint);
      checkpoint.runtimeState.counter = 'mutated';
      const got = await store.get('t-1');
      if (got === undefined) throw new Error('expected a checkpoint');
      got.checkpoint.window.length = 0;
      expect((await store.get('t-1'))?.checkpoint).toEqual(sampleCheckpoint(1));
    });

    it('a checkpoint over MAX_CHECKPOINT_BYTES is refused with invalid and nothing is written', async () => {
      const huge = sampleCheckpoint(1);
      huge.runtimeState.blob = 'x'.repeat(MAX_CHECKPOINT_BYTES);
      expect(await codeOf(store.put('t-1', huge))).toBe('invalid');
      expect(await store.get('t-1')).toBeUndefined();
      const revision = await store.put('t-1', sampleCheckpoint(1));
      expect((await store.get('t-1'))?.revision).toBe(revision);
    });

    it('keeps a large checkpoint intact', async () => {
      const checkpoint = sampleCheckpoint(1);
      for (let i = 0; i < 500; i++) {
        checkpoint.window.push({
          role: 'user',
          content: [{ type: 'text', text: `message ${i} ${'x'.repeat(100)}` }],
        });
      }
      await store.put('big', checkpoint);
      expect((await store.get('big'))?.checkpoint).toEqual(checkpoint);
    });
  });
}
