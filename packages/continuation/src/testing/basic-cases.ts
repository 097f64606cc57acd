import { isDeepStrictEqual } from 'node:util';
import { type Message, userMessage } from '@x/wire';
import { expect } from 'vitest';
import type { ContinuationStore } from '../store.js';
import type { Suspension } from '../suspension.js';
import { expectCode } from './assertions.js';
import type { ContractCase } from './contract-case.js';
import { askingAssistant, sampleSuspension, uniqueId } from './fixtures.js';

/** The single-caller cases of save and load: round trips, replacing, refusals before writing. */
export function basicCases<S extends ContinuationStore>(): ContractCase<S>[] {
  return [
    {
      group: 'save and load',
      name: 'round-trips every field of a suspension without a transcript',
      run: async ({ store }) => {
        const s = sampleSuspension({ sessionId: uniqueId('sess'), runId: uniqueId('run') });
        await store.save(s);
        expect(
          await store.load(s.interactionId),
          'load returns every field save was given',
        ).toEqual(s);
      },
    },
    {
      group: 'save and load',
      name: 'round-trips a deadline and its default (a version 2 suspension)',
      run: async ({ store }) => {
        const deadline = {
          at: new Date(Date.UTC(2026, 5, 7, 8, 9, 10, 11)),
          answer: { output: { city: 'Lisbon' }, isError: false },
        };
        const s = sampleSuspension({ deadline });
        await store.save(s);
        expect(
          await store.load(s.interactionId),
          'load returns the deadline save was given',
        ).toEqual(s);
        await store.markResolved(s.interactionId);
        await expectCode(
          store.load(s.interactionId),
          'already_resolved',
          'a version 2 suspension is marked resolved like any other',
        );
      },
    },
    {
      group: 'save and load',
      name: 'round-trips a suspension carrying the full transcript',
      run: async ({ store }) => {
        const s = sampleSuspension({ messages: true });
        await store.save(s);
        const loaded = await store.load(s.interactionId);
        expect(loaded, 'load returns the transcript save was given').toEqual(s);
        expect(loaded.messages?.at(-1), 'the transcript ends with the assistant message').toEqual(
          s.assistant,
        );
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
        expect(loaded.toolInput, 'tool input round-trips byte for byte').toEqual(input);
        expect(
          loaded.assistant,
          'the assistant message round-trips byte for byte (thinking signatures included)',
        ).toEqual(assistant);
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
        expect(
          await store.load(s.interactionId),
          'load returns a copy: changing it changes nothing stored',
        ).toEqual(s);
      },
    },
    {
      group: 'save and load',
      name: 'load of an unknown id is not_found',
      run: async ({ store }) => {
        await expectCode(
          store.load(uniqueId('missing')),
          'not_found',
          'load of an id never saved is not_found',
        );
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
        expect(
          await store.load(first.interactionId),
          'save over an unresolved suspension with the same id replaces it',
        ).toEqual(second);
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
        expect(
          versions.some((v) => isDeepStrictEqual(v, loaded)),
          'concurrent saves of one id leave one of them whole, not a mix',
        ).toBe(true);
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
        await expectCode(
          store.save(bad),
          'not_singleton',
          'save refuses a suspension whose assistant message has a sibling tool use',
        );
        await expectCode(store.load(s.interactionId), 'not_found', 'a refused save writes nothing');
      },
    },
    {
      group: 'save refuses bad suspensions before writing anything',
      name: 'not_singleton: the tool_use_id is not a tool use of the assistant message',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await expectCode(
          store.save({ ...s, toolUseId: uniqueId('other') }),
          'not_singleton',
          'save refuses a tool_use_id that is not a tool use of the assistant message',
        );
        await expectCode(store.load(s.interactionId), 'not_found', 'a refused save writes nothing');
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
          [{ ...s, version: 3 }, 'version'],
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
          await expectCode(
            store.save(bad as Suspension),
            'invalid',
            `save refuses a suspension with a bad ${field}, naming the field`,
            field,
          );
        }
        await expectCode(store.load(s.interactionId), 'not_found', 'a refused save writes nothing');
      },
    },
    {
      group: 'save refuses bad suspensions before writing anything',
      name: 'invalid: a transcript whose last message is not the assistant message',
      run: async ({ store }) => {
        const s = sampleSuspension({ messages: true });
        const messages = s.messages ?? [];
        const refused = 'save refuses a transcript that does not end with the assistant message';
        await expectCode(
          store.save({ ...s, messages: [...messages, userMessage('later')] }),
          'invalid',
          `${refused} (a message after it)`,
        );
        await expectCode(
          store.save({ ...s, messages: messages.slice(0, -1) }),
          'invalid',
          `${refused} (it is missing)`,
        );
        await expectCode(store.save({ ...s, messages: [] }), 'invalid', `${refused} (empty)`);
        const other = askingAssistant(s.toolUseId, 'A different question?');
        await expectCode(
          store.save({ ...s, messages: [...messages.slice(0, -1), other] }),
          'invalid',
          `${refused} (a different one)`,
        );
        await expectCode(store.load(s.interactionId), 'not_found', 'a refused save writes nothing');
      },
    },
    {
      group: 'save refuses bad suspensions before writing anything',
      name: 'a refused save over a stored suspension leaves the stored one intact',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await store.save(s);
        await expectCode(
          store.save({ ...s, toolUseId: uniqueId('other') }),
          'not_singleton',
          'save refuses a tool_use_id that is not a tool use of the assistant message',
        );
        expect(
          await store.load(s.interactionId),
          'a refused save over a stored suspension leaves the stored one intact',
        ).toEqual(s);
      },
    },
  ];
}
