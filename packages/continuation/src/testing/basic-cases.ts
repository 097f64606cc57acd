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
        expect(
          await store.load(s.interactionId),
          'load returns every field save was given',
        ).toEqual(s);
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
    {
      group: 'markResolved',
      name: 'makes load fail with already_resolved (resuming twice would re-run side effects)',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await store.save(s);
        await store.markResolved(s.interactionId);
        await expectCode(
          store.load(s.interactionId),
          'already_resolved',
          'load of a resolved continuation is already_resolved (resuming twice would re-run side effects)',
        );
      },
    },
    {
      group: 'markResolved',
      name: 'a second markResolved is already_resolved; an unknown id is not_found',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await store.save(s);
        await store.markResolved(s.interactionId);
        await expectCode(
          store.markResolved(s.interactionId),
          'already_resolved',
          'markResolved is exactly-once: a second markResolved is already_resolved',
        );
        await expectCode(
          store.markResolved(uniqueId('missing')),
          'not_found',
          'markResolved of an id never saved is not_found',
        );
      },
    },
    {
      group: 'markResolved',
      name: 'saving over a resolved suspension is already_resolved and does not resurrect it',
      run: async ({ store }) => {
        const s = sampleSuspension();
        await store.save(s);
        await store.markResolved(s.interactionId);
        await expectCode(
          store.save(s),
          'already_resolved',
          'save over a resolved continuation fails with already_resolved (a resolved one never comes back)',
        );
        await expectCode(
          store.load(s.interactionId),
          'already_resolved',
          'save over a resolved continuation does not resurrect it: load stays already_resolved',
        );
        expect(
          (await store.listUnresolved()).map((x) => x.interactionId),
          'save over a resolved continuation does not resurrect it: it is not listed',
        ).not.toContain(s.interactionId);
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

        const listed = 'listUnresolved lists the unresolved suspensions that match, oldest first';
        expect(await store.listUnresolved({ sessionId }), `${listed} (by session)`).toEqual([
          a2,
          b1,
          a1,
        ]);
        expect(
          await store.listUnresolved({ sessionId, runId: runA }),
          `${listed} (by session and run)`,
        ).toEqual([a2, a1]);
        expect(await store.listUnresolved({ runId: runA }), `${listed} (by run)`).toEqual(
          [a2, a1, elsewhere].sort(
            (x, y) =>
              x.createdAt.getTime() - y.createdAt.getTime() ||
              (x.interactionId < y.interactionId ? -1 : 1),
          ),
        );
        expect(
          await store.listUnresolved({ sessionId: uniqueId('nobody') }),
          `${listed} (none for an unknown session)`,
        ).toEqual([]);
        const all = (await store.listUnresolved()).map((s) => s.interactionId);
        expect(all, `${listed} (all, without a filter)`).toEqual(
          expect.arrayContaining([a1, a2, b1, elsewhere].map((s) => s.interactionId)),
        );
        expect(all, 'listUnresolved never lists a resolved continuation').not.toContain(
          done.interactionId,
        );
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
        expect(
          await resolve(store, loaded, answer),
          'resolve without a transcript returns [assistant, user(result)]',
        ).toEqual([s.assistant, userMessage(answer)]);
        await expectCode(
          store.load(s.interactionId),
          'already_resolved',
          'resolve marks the continuation resolved',
        );
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
        expect(messages, 'resumeMessages returns the transcript plus the answer').toEqual([
          ...(s.messages ?? []),
          userMessage(answer),
        ]);
        expect(
          await store.load(s.interactionId),
          'resumeMessages marks nothing: a model error must not strand the answer',
        ).toEqual(s);
        await store.markResolved(s.interactionId);
        await expectCode(
          store.load(s.interactionId),
          'already_resolved',
          'load after markResolved is already_resolved',
        );
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
        expect(
          await store.listUnresolved({ runId }),
          'a run that asks again lists only its new suspension',
        ).toEqual([second]);
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
          'resolve refuses a result for another tool use',
        );
        expect(await store.load(s.interactionId), 'a refused resolve marks nothing').toEqual(s);
      },
    },
  ];
}
