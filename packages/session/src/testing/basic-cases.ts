import { expect } from 'vitest';
import { MAX_CHECKPOINT_BYTES, type SessionCheckpoint } from '../checkpoint.js';
import type { CheckpointStore } from '../checkpoint-store.js';
import { SessionError } from '../errors.js';
import { codeOf } from './assertions.js';
import type { ContractCase } from './contract-case.js';
import { sampleCheckpoint } from './sample.js';
import { shown } from './suite-plumbing.js';

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
        expect(await store.get('nobody'), 'get of a thread never put is undefined').toBeUndefined();
        expect(await store.list(), 'a fresh store lists no thread').toEqual([]);
      },
    },
    {
      group: 'one writer',
      name: 'put creates, get returns an equal checkpoint with the returned revision',
      run: async ({ store }) => {
        const checkpoint = sampleCheckpoint(1);
        const revision = await store.put('t-1', checkpoint);
        expect(
          Number.isInteger(revision) && revision >= 1,
          `put returns a revision that is an integer of at least 1, got ${revision}`,
        ).toBe(true);
        const stored = await store.get('t-1');
        expect(stored, 'get returns what put stored, with the revision put returned').toEqual({
          threadId: 't-1',
          revision,
          checkpoint,
        });
      },
    },
    {
      group: 'one writer',
      name: 'put with the revision read replaces and returns a greater revision',
      run: async ({ store }) => {
        const first = await store.put('t-1', sampleCheckpoint(1), { expectedRevision: null });
        const second = await store.put('t-1', sampleCheckpoint(2), { expectedRevision: first });
        expect(
          second,
          'an update returns a revision greater than the one it replaced',
        ).toBeGreaterThan(first);
        expect(
          (await store.get('t-1'))?.checkpoint,
          'put with the revision read replaces the checkpoint',
        ).toEqual(sampleCheckpoint(2));
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
        expect(
          SessionError.hasCode(error, 'conflict'),
          `put quoting a stale revision is a conflict, got ${shown(error)}`,
        ).toBe(true);
        expect(
          (error as SessionError).details,
          'a conflict names the thread, the revision quoted and the live one',
        ).toMatchObject({
          threadId: 't-1',
          expectedRevision: first,
          actualRevision: second,
        });
        expect(await store.get('t-1'), 'a conflicting put changes nothing').toEqual({
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
        expect(
          await codeOf(store.put('t-1', sampleCheckpoint(2))),
          'put without a revision creates, and over an existing thread is a conflict',
        ).toBe('conflict');
        expect(
          await codeOf(store.put('t-1', sampleCheckpoint(2), { expectedRevision: null })),
          'put with expectedRevision null creates, and over an existing thread is a conflict',
        ).toBe('conflict');
        expect((await store.get('t-1'))?.revision, 'a refused create changes nothing').toBe(
          revision,
        );
      },
    },
    {
      group: 'one writer',
      name: 'update of a thread that does not exist is a conflict',
      run: async ({ store }) => {
        expect(
          await codeOf(store.put('t-1', sampleCheckpoint(1), { expectedRevision: 1 })),
          'an update of a thread that does not exist is a conflict',
        ).toBe('conflict');
        expect(await store.get('t-1'), 'a refused update writes nothing').toBeUndefined();
      },
    },
    {
      group: 'one writer',
      name: 'delete removes; a second delete is false; list forgets it',
      run: async ({ store }) => {
        await store.put('t-1', sampleCheckpoint(1));
        await store.put('t-2', sampleCheckpoint(2));
        expect(await store.delete('t-1'), 'delete of a live thread is true').toBe(true);
        expect(await store.get('t-1'), 'get of a deleted thread is undefined').toBeUndefined();
        expect(await store.delete('t-1'), 'a second delete is false').toBe(false);
        expect(await store.delete('never'), 'delete of a thread never put is false').toBe(false);
        expect(
          (await store.list()).map((s) => s.threadId),
          'list forgets a deleted thread',
        ).toEqual(['t-2']);
      },
    },
    {
      group: 'one writer',
      name: 'delete with a stale expected revision is a conflict and deletes nothing',
      run: async ({ store }) => {
        const first = await store.put('t-1', sampleCheckpoint(1));
        const second = await store.put('t-1', sampleCheckpoint(2), { expectedRevision: first });
        expect(
          await codeOf(store.delete('t-1', { expectedRevision: first })),
          'delete quoting a stale revision is a conflict',
        ).toBe('conflict');
        expect((await store.get('t-1'))?.revision, 'a refused delete deletes nothing').toBe(second);
        expect(
          await store.delete('t-1', { expectedRevision: second }),
          'delete quoting the live revision deletes',
        ).toBe(true);
      },
    },
    {
      group: 'one writer',
      name: 'revisions never repeat across delete: a revision read before the delete stays stale',
      run: async ({ store }) => {
        const first = await store.put('t-1', sampleCheckpoint(1));
        await store.delete('t-1');
        const again = await store.put('t-1', sampleCheckpoint(2), { expectedRevision: null });
        expect(
          again,
          `revisions never repeat across delete: a thread created again after a delete gets a revision greater than ${first}, the one before the delete (a tombstone must remain)`,
        ).toBeGreaterThan(first);
        expect(
          await codeOf(store.put('t-1', sampleCheckpoint(3), { expectedRevision: first })),
          'a revision read before a delete stays stale after the thread is created again',
        ).toBe('conflict');
        expect(
          (await store.get('t-1'))?.checkpoint,
          'a stale put after a delete changes nothing',
        ).toEqual(sampleCheckpoint(2));
      },
    },
    {
      group: 'one writer',
      name: 'list gives live threads ordered by id with their revisions',
      run: async ({ store }) => {
        const b = await store.put('b', sampleCheckpoint(1));
        const a = await store.put('a', sampleCheckpoint(2));
        const c = await store.put('c.1', sampleCheckpoint(3));
        expect(await store.list(), 'list gives the live threads ordered by id').toEqual([
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
        expect((await store.get('b'))?.checkpoint, 'a put on one thread changes no other').toEqual(
          sampleCheckpoint(2),
        );
      },
    },

    {
      group: 'one writer',
      name: 'refuses unsafe thread ids everywhere with unsafe_id, before any I/O',
      run: async ({ store }) => {
        for (const id of UNSAFE_IDS) {
          const where = `every store refuses the unsafe thread id ${JSON.stringify(id)}`;
          expect(await codeOf(store.get(id)), `${where} in get`).toBe('unsafe_id');
          expect(await codeOf(store.put(id, sampleCheckpoint(1))), `${where} in put`).toBe(
            'unsafe_id',
          );
          expect(await codeOf(store.delete(id)), `${where} in delete`).toBe('unsafe_id');
        }
        expect(await store.list(), 'a refused id writes nothing').toEqual([]);
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
        expect(
          await codeOf(store.put('t-1', bad)),
          'put validates the checkpoint first: an invalid one is invalid',
        ).toBe('invalid');
        expect(await store.get('t-1'), 'a refused put writes nothing').toBeUndefined();
        expect(await store.list(), 'a refused put writes nothing').toEqual([]);
      },
    },
    {
      group: 'one writer',
      name: 'a checkpoint of a newer version is refused with unsupported_version',
      run: async ({ store }) => {
        const newer = { ...sampleCheckpoint(1), version: 99 } as unknown as SessionCheckpoint;
        expect(
          await codeOf(store.put('t-1', newer)),
          'put refuses a checkpoint of a newer version with unsupported_version',
        ).toBe('unsupported_version');
        expect(await store.get('t-1'), 'a refused put writes nothing').toBeUndefined();
      },
    },
    {
      group: 'one writer',
      name: 'a bad expectedRevision is invalid',
      run: async ({ store }) => {
        expect(
          await codeOf(store.put('t-1', sampleCheckpoint(1), { expectedRevision: 0 })),
          'expectedRevision 0 is invalid (revisions start at 1)',
        ).toBe('invalid');
        expect(
          await codeOf(store.put('t-1', sampleCheckpoint(1), { expectedRevision: 1.5 })),
          'expectedRevision 1.5 is invalid (revisions are integers)',
        ).toBe('invalid');
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
        expect(
          (await store.get('t-1'))?.checkpoint,
          'put and get copy: mutating what was put or got changes nothing stored',
        ).toEqual(sampleCheckpoint(1));
      },
    },
    {
      group: 'one writer',
      name: 'a checkpoint over MAX_CHECKPOINT_BYTES is refused with invalid and nothing is written',
      run: async ({ store }) => {
        const huge = sampleCheckpoint(1);
        huge.runtimeState.blob = 'x'.repeat(MAX_CHECKPOINT_BYTES);
        expect(
          await codeOf(store.put('t-1', huge)),
          'put refuses a checkpoint over MAX_CHECKPOINT_BYTES with invalid',
        ).toBe('invalid');
        expect(await store.get('t-1'), 'a refused put writes nothing').toBeUndefined();
        const revision = await store.put('t-1', sampleCheckpoint(1));
        expect(
          (await store.get('t-1'))?.revision,
          'a thread refused once can still be created',
        ).toBe(revision);
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
        expect(
          (await store.get('big'))?.checkpoint,
          'a large checkpoint round-trips intact',
        ).toEqual(checkpoint);
      },
    },
  ];
}
