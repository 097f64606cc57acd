import { toolResult, userMessage } from '@x/wire';
import { expect } from 'vitest';
import { resolve, resumeMessages } from '../resume.js';
import type { ContinuationStore } from '../store.js';
import { expectCode } from './assertions.js';
import type { ContractCase } from './contract-case.js';
import { askingAssistant, sampleSuspension, uniqueId } from './fixtures.js';

/** The single-caller cases after a save: marking, listing, resuming. */
export function resolveCases<S extends ContinuationStore>(): ContractCase<S>[] {
  return [
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
