import { expect } from 'vitest';
import { MAX_CHECKPOINT_BYTES, type SessionCheckpoint } from '../checkpoint.js';
import type { CheckpointStore } from '../checkpoint-store.js';
import { SessionError } from '../errors.js';
import { codeOf } from './assertions.js';
import type { ContractCase } from './contract-case.js';
import { sampleCheckpoint } from './sample.js';

const UNSAFE_IDS = [
  '',
  '.',
  '..',
  '../x',
  'a/b',
  'a\\b',
  '.hidden',
  'x'.repeat(201),
  'a b',
  'nul\u0000',
];

/** The single-writer cases: create, update, delete, list, validation and copies. */
export function basicCases<S extends CheckpointStore>(): ContractCase<S>[] {
  return [
    {
      group: 'one writer',
      name: 'get of an unknown thread is undefined and list is empty',
      run: async ({ store }) => {
        expect(await store.get('nobody')).toBeUndefined();
        expect(await store.list()).toEqual([]);
      },
    },
    {
      group: 'one writer',
      name: 'put creates, get returns an equal checkpoint with the returned revision',
      run: async ({ store }) => {
        const checkpoint = sampleCheckpoint(1);
        const revision = await store.put('t-1', checkpoint);
        expect(Number.isInteger(revision) && revision >= 1).toBe(true);
        const stored = await store.get('t-1');
        expect(stored).toEqual({ threadId: 't-1', revision, checkpoint });
      },
    },
    {
      group: 'one writer',
      name: 'put with the revision read replaces and returns a greater revision',
      run: async ({ store }) => {
        const first = await store.put('t-1', sampleCheckpoint(1), { expectedRevision: null });
        const second = await store.put('t-1', sampleCheckpoint(2), { expectedRevision: first });
        expect(second).toBeGreaterThan(first);
        expect((await store.get('t-1'))?.checkpoint).toEqual(sampleCheckpoint(2));
      },
    },
    {
      group: 'one writer',
      name: 'a stale revision is a conflict and changes nothing',
      run: async ({ store }) => {
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
      },
    },
    {
      group: 'one writer',
      name: 'create over an existing checkpoint is a conflict',
      run: async ({ store }) => {
        const revision = await store.put('t-1', sampleCheckpoint(1));
        expect(await codeOf(store.put('t-1', sampleCheckpoint(2)))).toBe('conflict');
        expect(
          await codeOf(store.put('t-1', sampleCheckpoint(2), { expectedRevision: null })),
        ).toBe('conflict');
        expect((await store.get('t-1'))?.revision).toBe(revision);
      },
    },
    {
      group: 'one writer',
      name: 'update of a thread that does not exist is a conflict',
      run: async ({ store }) => {
        expect(await codeOf(store.put('t-1', sampleCheckpoint(1), { expectedRevision: 1 }))).toBe(
          'conflict',
        );
        expect(await store.get('t-1')).toBeUndefined();
      },
    },
    {
      group: 'one writer',
      name: 'delete removes; a second delete is false; list forgets it',
      run: async ({ store }) => {
        await store.put('t-1', sampleCheckpoint(1));
        await store.put('t-2', sampleCheckpoint(2));
        expect(await store.delete('t-1')).toBe(true);
        expect(await store.get('t-1')).toBeUndefined();
        expect(await store.delete('t-1')).toBe(false);
        expect(await store.delete('never')).toBe(false);
        expect((await store.list()).map((s) => s.threadId)).toEqual(['t-2']);
      },
    },
    {
      group: 'one writer',
      name: 'delete with a stale expected revision is a conflict and deletes nothing',
      run: async ({ store }) => {
        const first = await store.put('t-1', sampleCheckpoint(1));
        const second = await store.put('t-1', sampleCheckpoint(2), { expectedRevision: first });
        expect(await codeOf(store.delete('t-1', { expectedRevision: first }))).toBe('conflict');
        expect((await store.get('t-1'))?.revision).toBe(second);
        expect(await store.delete('t-1', { expectedRevision: second })).toBe(true);
      },
    },
    {
      group: 'one writer',
      name: 'revisions never repeat across delete: a revision read before the delete stays stale',
      run: async ({ store }) => {
        const first = await store.put('t-1', sampleCheckpoint(1));
        await store.delete('t-1');
        const again = await store.put('t-1', sampleCheckpoint(2), { expectedRevision: null });
        expect(again).toBeGreaterThan(first);
        expect(
          await codeOf(store.put('t-1', sampleCheckpoint(3), { expectedRevision: first })),
        ).toBe('conflict');
        expect((await store.get('t-1'))?.checkpoint).toEqual(sampleCheckpoint(2));
      },
    },
    {
      group: 'one writer',
      name: 'list gives live threads ordered by id with their revisions',
      run: async ({ store }) => {
        const b = await store.put('b', sampleCheckpoint(1));
        const a = await store.put('a', sampleCheckpoint(2));
        const c = await store.put('c.1', sampleCheckpoint(3));
        expect(await store.list()).toEqual([
          { threadId: 'a', revision: a },
          { threadId: 'b', revision: b },
          { threadId: 'c.1', revision: c },
        ]);
      },
    },
    {
      group: 'one writer',
      name: 'threads are independent',
      run: async ({ store }) => {
        const a = await store.put('a', sampleCheckpoint(1));
        await store.put('b', sampleCheckpoint(2));
        await store.put('a', sampleCheckpoint(3), { expectedRevision: a });
        expect((await store.get('b'))?.checkpoint).toEqual(sampleCheckpoint(2));
      },
    },

    {
      group: 'one writer',
      name: 'refuses unsafe thread ids everywhere with unsafe_id, before any I/O',
      run: async ({ store }) => {
        for (const id of UNSAFE_IDS) {
          const where = `thread id ${JSON.stringify(id)}`;
          expect(await codeOf(store.get(id)), where).toBe('unsafe_id');
          expect(await codeOf(store.put(id, sampleCheckpoint(1))), where).toBe('unsafe_id');
          expect(await codeOf(store.delete(id)), where).toBe('unsafe_id');
        }
        expect(await store.list()).toEqual([]);
      },
    },

    {
      group: 'one writer',
      name: 'an invalid checkpoint is refused with invalid and nothing is written',
      run: async ({ store }) => {
        const bad = {
          ...sampleCheckpoint(1),
          window: [{ role: 'robot', content: [] }],
        } as unknown as SessionCheckpoint;
        expect(await codeOf(store.put('t-1', bad))).toBe('invalid');
        expect(await store.get('t-1')).toBeUndefined();
        expect(await store.list()).toEqual([]);
      },
    },
    {
      group: 'one writer',
      name: 'a checkpoint of a newer version is refused with unsupported_version',
      run: async ({ store }) => {
        const newer = { ...sampleCheckpoint(1), version: 99 } as unknown as SessionCheckpoint;
        expect(await codeOf(store.put('t-1', newer))).toBe('unsupported_version');
        expect(await store.get('t-1')).toBeUndefined();
      },
    },
    {
      group: 'one writer',
      name: 'a bad expectedRevision is invalid',
      run: async ({ store }) => {
        expect(await codeOf(store.put('t-1', sampleCheckpoint(1), { expectedRevision: 0 }))).toBe(
          'invalid',
        );
        expect(await codeOf(store.put('t-1', sampleCheckpoint(1), { expectedRevision: 1.5 }))).toBe(
          'invalid',
        );
      },
    },
    {
      group: 'one writer',
      name: 'stored data is a copy: mutating what was put or got changes nothing',
      run: async ({ store }) => {
        const checkpoint = sampleCheckpoint(1);
        await store.put('t-1', checkpoint);
        checkpoint.runtimeState.counter = 'mutated';
        const got = await store.get('t-1');
        if (got === undefined) throw new Error('expected a checkpoint');
        got.checkpoint.window.length = 0;
        expect((await store.get('t-1'))?.checkpoint).toEqual(sampleCheckpoint(1));
      },
    },
    {
      group: 'one writer',
      name: 'a checkpoint over MAX_CHECKPOINT_BYTES is refused with invalid and nothing is written',
      run: async ({ store }) => {
        const huge = sampleCheckpoint(1);
        huge.runtimeState.blob = 'x'.repeat(MAX_CHECKPOINT_BYTES);
        expect(await codeOf(store.put('t-1', huge))).toBe('invalid');
        expect(await store.get('t-1')).toBeUndefined();
        const revision = await store.put('t-1', sampleCheckpoint(1));
        expect((await store.get('t-1'))?.revision).toBe(revision);
      },
    },
    {
      group: 'one writer',
      name: 'keeps a large checkpoint intact',
      run: async ({ store }) => {
        const checkpoint = sampleCheckpoint(1);
        for (let i = 0; i < 500; i++) {
          checkpoint.window.push({
            role: 'user',
            content: [{ type: 'text', text: `message ${i} ${'x'.repeat(100)}` }],
          });
        }
        await store.put('big', checkpoint);
        expect((await store.get('big'))?.checkpoint).toEqual(checkpoint);
      },
    },
  ];
}
