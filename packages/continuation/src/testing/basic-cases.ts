import { isDeepStrictEqual } from 'node:util';
import { type Message, toolResult, userMessage } from '@x/wire';
import { expect } from 'vitest';
import { resolve, resumeMessages } from '../resume.js';
import type { ContinuationStore } from '../store.js';
import type { Suspension } from '../suspension.js';
import { expectCode } from './assertions.js';
import type { ContractCase } from './contract-case.js';
import { askingAssistant, sampleSuspension, uniqueId } from './fixtures.js';

/** The single-caller cases: round trips, refusals before writing, marking, listing, resuming. */
export function basicCases<S extends ContinuationStore>(): ContractCase<S>[] {
  return [
    {
      group: 'save and load',
      name: 'round-trips every field of a suspension without a transcript',
      run: async ({ store }) => {
        const s = sampleSuspension({ sessionId: uniqueId('sess'), runId: uniqueId('run') });
        await store.save(s);
        expect(await store.load(s.interactionId)).toEqual(s);
      },
    },
    {
      group: 'save and load',
      name: 'round-trips a suspension carrying the full transcript',
      run: async ({ store }) => {
        const s = sampleSuspension({ messages: true });
        await store.save(s);
        const loaded = await store.load(s.interactionId);
        expect(loaded).toEqual(s);
        expect(loaded.messages?.at(-1)).toEqual(s.assistant);
      },
    },
    {
      group: 'save and load',
      name: 'keeps unicode, big tool inputs and thinking signatures byte for byte',
      run: async ({ store }) => {
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
      },
    },
    {
      group: 'save and load',
      name: 'returns a copy: changing a loaded suspension does not change the stored one',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await store.save(s);
        const loaded = await store.load(s.interactionId);
        loaded.assistant.content.length = 0;
        expect(await store.load(s.interactionId)).toEqual(s);
      },
    },
    {
      group: 'save and load',
      name: 'load of an unknown id is not_found',
      run: async ({ store }) => {
        await expectCode(store.load(uniqueId('missing')), 'not_found');
      },
    },
    {
      group: 'save and load',
      name: 'saving over an unresolved suspension with the same id replaces it',
      run: async ({ store }) => {
        const first = sampleSuspension();
        await store.save(first);
        const second = sampleSuspension({ interactionId: first.interactionId, messages: true });
        await store.save(second);
        expect(await store.load(first.interactionId)).toEqual(second);
      },
    },
    {
      group: 'save and load',
      name: 'concurrent saves of one id leave one of them whole',
      run: async ({ store }) => {
        const id = uniqueId('ask');
        const versions = Array.from({ length: 8 }, (_, i) =>
          sampleSuspension({ interactionId: id, ...(i % 2 === 0 ? { messages: true } : {}) }),
        );
        await Promise.all(versions.map((v) => store.save(v)));
        const loaded = await store.load(id);
        expect(versions.some((v) => isDeepStrictEqual(v, loaded))).toBe(true);
      },
    },
    {
      group: 'save refuses bad suspensions before writing anything',
      name: 'not_singleton: a sibling tool use in the same assistant message',
      run: async ({ store }) => {
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
      },
    },
    {
      group: 'save refuses bad suspensions before writing anything',
      name: 'not_singleton: the tool_use_id is not a tool use of the assistant message',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await expectCode(store.save({ ...s, toolUseId: uniqueId('other') }), 'not_singleton');
        await expectCode(store.load(s.interactionId), 'not_found');
      },
    },
    {
      group: 'save refuses bad suspensions before writing anything',
      name: 'invalid: schema violations, naming the field',
      run: async ({ store }) => {
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
      },
    },
    {
      group: 'save refuses bad suspensions before writing anything',
      name: 'invalid: a transcript whose last message is not the assistant message',
      run: async ({ store }) => {
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
      },
    },
    {
      group: 'save refuses bad suspensions before writing anything',
      name: 'a refused save over a stored suspension leaves the stored one intact',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await store.save(s);
        await expectCode(store.save({ ...s, toolUseId: uniqueId('other') }), 'not_singleton');
        expect(await store.load(s.interactionId)).toEqual(s);
      },
    },
    {
      group: 'markResolved',
      name: 'makes load fail with already_resolved (resuming twice would re-run side effects)',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await store.save(s);
        await store.markResolved(s.interactionId);
        await expectCode(store.load(s.interactionId), 'already_resolved');
      },
    },
    {
      group: 'markResolved',
      name: 'a second markResolved is already_resolved; an unknown id is not_found',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await store.save(s);
        await store.markResolved(s.interactionId);
        await expectCode(store.markResolved(s.interactionId), 'already_resolved');
        await expectCode(store.markResolved(uniqueId('missing')), 'not_found');
      },
    },
    {
      group: 'markResolved',
      name: 'saving over a resolved suspension is already_resolved and does not resurrect it',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await store.save(s);
        await store.markResolved(s.interactionId);
        await expectCode(store.save(s), 'already_resolved');
        await expectCode(store.load(s.interactionId), 'already_resolved');
        expect((await store.listUnresolved()).map((x) => x.interactionId)).not.toContain(
          s.interactionId,
        );
      },
    },
    {
      group: 'listUnresolved',
      name: 'lists unresolved suspensions oldest first, filtered by session and run',
      run: async ({ store }) => {
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
      },
    },
    {
      group: 'resume',
      name: 'interactive: without messages, resolve returns exactly [assistant, user(result)] and marks',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await store.save(s);
        const loaded = await store.load(s.interactionId);
        const answer = toolResult(s.toolUseId, 'yes');
        expect(await resolve(store, loaded, answer)).toEqual([s.assistant, userMessage(answer)]);
        await expectCode(store.load(s.interactionId), 'already_resolved');
      },
    },
    {
      group: 'resume',
      name: 'unattended: resumeMessages returns the transcript plus the answer and leaves it retryable',
      run: async ({ store }) => {
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
      },
    },
    {
      group: 'resume',
      name: 'a resumed run that asks again: the new suspension is saved, then the old one marked',
      run: async ({ store }) => {
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
      },
    },
    {
      group: 'resume',
      name: 'a result for another tool use is mismatched_result and marks nothing',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await store.save(s);
        await expectCode(
          resolve(store, s, toolResult(uniqueId('toolu'), 'yes')),
          'mismatched_result',
        );
        expect(await store.load(s.interactionId)).toEqual(s);
      },
    },
  ];
}
