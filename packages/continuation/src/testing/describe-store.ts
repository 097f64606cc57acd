import { isDeepStrictEqual } from 'node:util';
import { type Message, toolResult, userMessage } from '@x/wire';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolve, resumeMessages } from '../resume.js';
import type { ContinuationStore } from '../store.js';
import type { Suspension } from '../suspension.js';
import { codeOf, expectCode } from './assertions.js';
import { askingAssistant, sampleSuspension, uniqueId } from './fixtures.js';
import { describeHostileInput } from './hostile-cases.js';
import type { DescribeContinuationStoreOptions } from './options.js';

export type { ContinuationStoreCapabilities, DescribeContinuationStoreOptions } from './options.js';

const RACERS = 12;

/**
 * Registers the whole {@link ContinuationStore} contract as a vitest `describe` block:
 * save/load round trips, validation before any write, replace-vs-resolved, exactly-once
 * `markResolved` under concurrent callers, `listUnresolved` filters and order, the resume
 * helpers, and the bad-input cases. Call it from a test file of your adapter.
 *
 * @example
 * // my-store.test.ts
 * import { describeContinuationStore } from '@x/continuation/testing';
 * describeContinuationStore({
 *   name: 'RedisContinuationStore',
 *   create: async () => new RedisContinuationStore(await connect(), { prefix: crypto.randomUUID() }),
 *   destroy: (store) => store.close(),
 * });
 */
export function describeContinuationStore<S extends ContinuationStore>(
  options: DescribeContinuationStoreOptions<S>,
): void {
  const { reopen } = options;

  describe(`${options.name} (ContinuationStore conformance)`, () => {
    let store: S;
    beforeEach(async () => {
      store = await options.create();
    });
    afterEach(async () => {
      await options.destroy?.(store);
    });

    describe('save and load', () => {
      it('round-trips every field of a suspension without a transcript', async () => {
        const s = sampleSuspension({ sessionId: uniqueId('sess'), runId: uniqueId('run') });
        await store.save(s);
        expect(await store.load(s.interactionId)).toEqual(s);
      });

      it('round-trips a suspension carrying the full transcript', async () => {
        const s = sampleSuspension({ messages: true });
        await store.save(s);
        const loaded = await store.load(s.interactionId);
        expect(loaded).toEqual(s);
        expect(loaded.messages?.at(-1)).toEqual(s.assistant);
      });

      it('keeps unicode, big tool inputs and thinking signatures byte for byte', async () => {
        const toolUseId = uniqueId('toolu');
        const input = {
          text: 'é😀\u0000\n"quoted"',
          list: Array.from({ length: 500 }, (_, i) => i),
        };
        const assistant: Message = {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'ü', signature: 'EqQBCkgIARABGAIiQ+/=' },
            { type: 'tool_use', id: toolUseId, name: 'ask_user', input },
          ],
        };
        const s = sampleSuspension({ toolUseId, assistant });
        await store.save(s);
        const loaded = await store.load(s.interactionId);
        expect(loaded.toolInput).toEqual(input);
        expect(loaded.assistant).toEqual(assistant);
      });

      it('returns a copy: changing a loaded suspension does not change the stored one', async () => {
        const s = sampleSuspension();
        await store.save(s);
        const loaded = await store.load(s.interactionId);
        loaded.assistant.content.length = 0;
        expect(await store.load(s.interactionId)).toEqual(s);
      });

      it('load of an unknown id is not_found', async () => {
        await expectCode(store.load(uniqueId('missing')), 'not_found');
      });

      it('saving over an unresolved suspension with the same id replaces it', async () => {
        const first = sampleSuspension();
        await store.save(first);
        const second = sampleSuspension({ interactionId: first.interactionId, messages: true });
        await store.save(second);
        expect(await store.load(first.interactionId)).toEqual(second);
      });

      it('concurrent saves of one id leave one of them whole', async () => {
        const id = uniqueId('ask');
        const versions = Array.from({ length: 8 }, (_, i) =>
          sampleSuspension({ interactionId: id, ...(i % 2 === 0 ? { messages: true } : {}) }),
        );
        await Promise.all(versions.map((v) => store.save(v)));
        const loaded = await store.load(id);
        expect(versions.some((v) => isDeepStrictEqual(v, loaded))).toBe(true);
      });
    });

    describe('save refuses bad suspensions before writing anything', () => {
      it('not_singleton: a sibling tool use in the same assistant message', async () => {
        const s = sampleSuspension();
        const bad: Suspension = {
          ...s,
          assistant: {
            role: 'assistant',
            content: [
              ...askingAssistant(s.toolUseId).content,
              { type: 'tool_use', id: uniqueId('toolu'), name: 'delete_file', input: {} },
            ],
          },
        };
        await expectCode(store.save(bad), 'not_singleton');
        await expectCode(store.load(s.interactionId), 'not_found');
      });

      it('not_singleton: the tool_use_id is not a tool use of the assistant message', async () => {
        const s = sampleSuspension();
        await expectCode(store.save({ ...s, toolUseId: uniqueId('other') }), 'not_singleton');
        await expectCode(store.load(s.interactionId), 'not_found');
      });

      it('invalid: schema violations, naming the field', async () => {
        const s = sampleSuspension();
        const cases: Array<[unknown, string]> = [
          [{ ...s, toolUseId: '' }, 'toolUseId'],
          [{ ...s, interactionId: undefined }, 'interactionId'],
          [{ ...s, version: 2 }, 'version'],
          [{ ...s, createdAt: new Date(Number.NaN) }, 'createdAt'],
          [{ ...s, createdAt: new Date(Date.UTC(10000, 0, 1)) }, 'createdAt'],
          [{ ...s, createdAt: '2026-01-01T00:00:00Z' }, 'createdAt'],
          [
            { ...s, assistant: { role: 'assistant', content: [{ type: 'bogus' }] } },
            'assistant.content',
          ],
          [{ ...s, resolved: true }, 'resolved'],
        ];
        for (const [bad, field] of cases) {
          await expectCode(store.save(bad as Suspension), 'invalid', field);
        }
        await expectCode(store.load(s.interactionId), 'not_found');
      });

      it('invalid: a transcript whose last message is not the assistant message', async () => {
        const s = sampleSuspension({ messages: true });
        const messages = s.messages ?? [];
        await expectCode(
          store.save({ ...s, messages: [...messages, userMessage('later')] }),
          'invalid',
        );
        await expectCode(store.save({ ...s, messages: messages.slice(0, -1) }), 'invalid');
        await expectCode(store.save({ ...s, messages: [] }), 'invalid');
        const other = askingAssistant(s.toolUseId, 'A different question?');
        await expectCode(
          store.save({ ...s, messages: [...messages.slice(0, -1), other] }),
          'invalid',
        );
        await expectCode(store.load(s.interactionId), 'not_found');
      });

      it('a refused save over a stored suspension leaves the stored one intact', async () => {
        const s = sampleSuspension();
        await store.save(s);
        await expectCode(store.save({ ...s, toolUseId: uniqueId('other') }), 'not_singleton');
        expect(await store.load(s.interactionId)).toEqual(s);
      });
    });

    describe('markResolved', () => {
      it('makes load fail with already_resolved (resuming twice would re-run side effects)', async () => {
        const s = sampleSuspension();
        await store.save(s);
        await store.markResolved(s.interactionId);
        await expectCode(store.load(s.interactionId), 'already_resolved');
      });

      it('a second markResolved is already_resolved; an unknown id is not_found', async () => {
        const s = sampleSuspension();
        await store.save(s);
        await store.markResolved(s.interactionId);
        await expectCode(store.markResolved(s.interactionId), 'already_resolved');
        await expectCode(store.markResolved(uniqueId('missing')), 'not_found');
      });

      it('saving over a resolved suspension is already_resolved and does not resurrect it', async () => {
        const s = sampleSuspension();
        await store.save(s);
        await store.markResolved(s.interactionId);
        await expectCode(store.save(s), 'already_resolved');
        await expectCode(store.load(s.interactionId), 'already_resolved');
        expect((await store.listUnresolved()).map((x) => x.interactionId)).not.toContain(
          s.interactionId,
        );
      });

      it(`exactly one of ${RACERS} concurrent callers wins`, async () => {
        const s = sampleSuspension();
        await store.save(s);
        const other = reopen === undefined ? store : await reopen(store);
        const codes = await Promise.all(
          Array.from({ length: RACERS }, (_, i) =>
            codeOf((i % 2 === 0 ? store : other).markResolved(s.interactionId)),
          ),
        );
        expect(codes.filter((c) => c === 'ok')).toHaveLength(1);
        expect(codes.filter((c) => c === 'already_resolved')).toHaveLength(RACERS - 1);
      });

      it(`exactly one of ${RACERS} concurrent resolve() calls gets the resume messages`, async () => {
        const s = sampleSuspension();
        await store.save(s);
        const other = reopen === undefined ? store : await reopen(store);
        const answer = toolResult(s.toolUseId, 'yes');
        const codes = await Promise.all(
          Array.from({ length: RACERS }, (_, i) =>
            codeOf(resolve(i % 2 === 0 ? store : other, s, answer)),
          ),
        );
        expect(codes.filter((c) => c === 'ok')).toHaveLength(1);
        expect(codes.filter((c) => c === 'already_resolved')).toHaveLength(RACERS - 1);
      });
    });

    describe('listUnresolved', () => {
      it('lists unresolved suspensions oldest first, filtered by session and run', async () => {
        const sessionId = uniqueId('sess');
        const [runA, runB] = [uniqueId('run'), uniqueId('run')];
        const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);
        const a1 = sampleSuspension({ sessionId, runId: runA, createdAt: at(3000) });
        const a2 = sampleSuspension({
          sessionId,
          runId: runA,
          createdAt: at(1000),
          messages: true,
        });
        const b1 = sampleSuspension({ sessionId, runId: runB, createdAt: at(2000) });
        const elsewhere = sampleSuspension({ sessionId: uniqueId('sess'), runId: runA });
        const done = sampleSuspension({ sessionId, runId: runA, createdAt: at(0) });
        for (const s of [a1, a2, b1, elsewhere, done]) await store.save(s);
        await store.markResolved(done.interactionId);

        expect(await store.listUnresolved({ sessionId })).toEqual([a2, b1, a1]);
        expect(await store.listUnresolved({ sessionId, runId: runA })).toEqual([a2, a1]);
        expect(await store.listUnresolved({ runId: runA })).toEqual(
          [a2, a1, elsewhere].sort(
            (x, y) =>
              x.createdAt.getTime() - y.createdAt.getTime() ||
              (x.interactionId < y.interactionId ? -1 : 1),
          ),
        );
        expect(await store.listUnresolved({ sessionId: uniqueId('nobody') })).toEqual([]);
        const all = (await store.listUnresolved()).map((s) => s.interactionId);
        expect(all).toEqual(
          expect.arrayContaining([a1, a2, b1, elsewhere].map((s) => s.interactionId)),
        );
        expect(all).not.toContain(done.interactionId);
      });
    });

    describe('resume', () => {
      it('interactive: without messages, resolve returns exactly [assistant, user(result)] and marks', async () => {
        const s = sampleSuspension();
        await store.save(s);
        const loaded = await store.load(s.interactionId);
        const answer = toolResult(s.toolUseId, 'yes');
        expect(await resolve(store, loaded, answer)).toEqual([s.assistant, userMessage(answer)]);
        await expectCode(store.load(s.interactionId), 'already_resolved');
      });

      it('unattended: resumeMessages returns the transcript plus the answer and leaves it retryable', async () => {
        const s = sampleSuspension({ messages: true });
        await store.save(s);
        const loaded = await store.load(s.interactionId);
        const answer = toolResult(s.toolUseId, [{ type: 'text', text: 'approved' }]);
        const messages = resumeMessages(loaded, answer);
        expect(messages).toEqual([...(s.messages ?? []), userMessage(answer)]);
        // a model error here must not strand the answer: the continuation still loads
        expect(await store.load(s.interactionId)).toEqual(s);
        await store.markResolved(s.interactionId);
        await expectCode(store.load(s.interactionId), 'already_resolved');
      });

      it('a resumed run that asks again: the new suspension is saved, then the old one marked', async () => {
        const runId = uniqueId('run');
        const first = sampleSuspension({ runId, messages: true });
        await store.save(first);
        const answer = toolResult(first.toolUseId, 'yes');
        const resumed = resumeMessages(await store.load(first.interactionId), answer);
        const toolUseId = uniqueId('toolu');
        const again = askingAssistant(toolUseId, 'And the database too?');
        const second = sampleSuspension({
          runId,
          toolUseId,
          assistant: again,
          messages: [...resumed, again],
        });
        await store.save(second);
        await store.markResolved(first.interactionId);
        expect(await store.listUnresolved({ runId })).toEqual([second]);
        expect(resumeMessages(second, toolResult(toolUseId, 'no'))).toHaveLength(
          resumed.length + 2,
        );
      });

      it('a result for another tool use is mismatched_result and marks nothing', async () => {
        const s = sampleSuspension();
        await store.save(s);
        await expectCode(
          resolve(store, s, toolResult(uniqueId('toolu'), 'yes')),
          'mismatched_result',
        );
        expect(await store.load(s.interactionId)).toEqual(s);
      });
    });

    describeHostileInput(options, () => store);
  });
}
