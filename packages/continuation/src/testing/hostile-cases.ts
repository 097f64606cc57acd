import { toolResult } from '@x/wire';
import { expect } from 'vitest';
import { encodeSuspension } from '../codec.js';
import { resumeMessages } from '../resume.js';
import type { ContinuationStore } from '../store.js';
import type { Suspension } from '../suspension.js';
import { codeOf, expectCode } from './assertions.js';
import type { ContractCase } from './contract-case.js';
import { sampleSuspension, uniqueId } from './fixtures.js';
import type { DescribeContinuationStoreOptions } from './options.js';
import { shown } from './suite-plumbing.js';

const HOSTILE_IDS = ['../escape', 'a/b', 'a\\b', 'a\u0000b', '', 'x'.repeat(201), '..', '.hidden'];

/** The bad-input cases: path-like ids, and records written by other programs. */
export function hostileCases<S extends ContinuationStore>(
  options: DescribeContinuationStoreOptions<S>,
): ContractCase<S>[] {
  const { writeRaw } = options;
  const raw = (s: Suspension, change: Record<string, unknown> = {}) => ({
    ...encodeSuspension(s),
    ...change,
  });
  const noRaw = writeRaw === undefined ? { skip: 'the adapter gives no writeRaw' } : {};
  // Writes a record no store would write, runs `check` on it, then saves a valid suspension
  // over it and resolves that: later cases on a shared backing never list it.
  const withRecord = async (
    store: S,
    id: string,
    record: unknown,
    check: () => Promise<unknown>,
  ) => {
    if (writeRaw === undefined) return;
    await writeRaw(store, id, record);
    const tidy = async () => {
      await store.save(sampleSuspension({ interactionId: id }));
      await store.markResolved(id);
    };
    try {
      await check();
    } catch (error) {
      await tidy().catch(() => {});
      throw error;
    }
    const error = await tidy().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(
      error,
      `save over an unresolved record replaces it, also a corrupt one (the suite then resolves it, to leave a shared backing as it was): got ${shown(error)}`,
    ).toBeUndefined();
  };
  return [
    {
      group: 'hostile ids',
      name: 'ids that are not safe ids are refused with unsafe_id before any I/O',
      run: async ({ store }) => {
        for (const id of HOSTILE_IDS) {
          const where = `every store refuses the unsafe interaction id ${JSON.stringify(id.slice(0, 20))}`;
          expect(await codeOf(store.load(id)), `${where} in load`).toBe('unsafe_id');
          expect(await codeOf(store.markResolved(id)), `${where} in markResolved`).toBe(
            'unsafe_id',
          );
          if (id !== '') {
            const save = store.save({ ...sampleSuspension(), interactionId: id });
            expect(await codeOf(save), `${where} in save`).toBe('unsafe_id');
          }
        }
      },
    },
    {
      group: 'hostile ids',
      name: 'an empty interaction id is refused by save',
      run: async ({ store }) => {
        await expectCode(
          store.save({ ...sampleSuspension(), interactionId: '' }),
          'invalid',
          'save refuses an empty interaction id, naming the field',
          'interactionId',
        );
      },
    },
    {
      group: 'stored records written by others',
      name: 'a record of an unknown version is unsupported_version',
      ...noRaw,
      run: async ({ store }) => {
        const s = sampleSuspension();
        await withRecord(store, s.interactionId, raw(s, { version: 3 }), () =>
          expectCode(
            store.load(s.interactionId),
            'unsupported_version',
            'load of a record of an unknown version is unsupported_version',
          ),
        );
      },
    },
    {
      group: 'stored records written by others',
      name: 'a corrupt record is invalid, naming the bad field',
      ...noRaw,
      run: async ({ store }) => {
        const cases: Array<[Record<string, unknown>, string]> = [
          [{ tool_use_id: 42 }, 'tool_use_id'],
          [{ created_at: 'yesterday' }, 'created_at'],
          [{ assistant: { role: 'robot', content: [] } }, 'assistant.role'],
          [{ resolved: 'no' }, 'resolved'],
          [{ version: '1' }, 'version'],
        ];
        for (const [change, field] of cases) {
          const s = sampleSuspension();
          await withRecord(store, s.interactionId, raw(s, change), () =>
            expectCode(
              store.load(s.interactionId),
              'invalid',
              `load of a corrupt record (bad ${field}) is invalid, naming the field`,
              field,
            ),
          );
        }
      },
    },
    {
      group: 'stored records written by others',
      name: 'a record with nanosecond time and omitted optional fields loads and resolves',
      ...noRaw,
      run: async ({ store }) => {
        const id = uniqueId('foreign');
        const toolUseId = uniqueId('toolu');
        await writeRaw?.(store, id, {
          version: 1,
          interaction_id: id,
          tool_use_id: toolUseId,
          tool_name: 'ask_user',
          tool_input: { question: 'ok?' },
          assistant: {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: toolUseId, name: 'ask_user', input: { question: 'ok?' } },
            ],
          },
          created_at: '2025-06-01T12:34:56.123456789+02:00',
          resolved: false,
        });
        const loaded = await store.load(id);
        expect(loaded.createdAt.toISOString()).toBe('2025-06-01T10:34:56.123Z');
        expect(loaded.messages).toBeUndefined();
        expect(loaded.sessionId).toBeUndefined();
        expect(resumeMessages(loaded, toolResult(toolUseId, 'ok'))).toHaveLength(2);
        await store.markResolved(id);
        await expectCode(
          store.load(id),
          'already_resolved',
          'a record written by another program resolves like any other',
        );
      },
    },
  ];
}
