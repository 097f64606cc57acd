import { setImmediate as nextTurn } from 'node:timers/promises';
import { toolResult } from '@x/wire';
import { expect } from 'vitest';
import { resolve } from '../resume.js';
import type { ContinuationStore } from '../store.js';
import { codeOf } from './assertions.js';
import type { ContractCase } from './contract-case.js';
import { sampleSuspension, uniqueId } from './fixtures.js';
import type { DescribeContinuationStoreOptions } from './options.js';

const RACERS = 12;

/** Waits 0 to 3 turns of the event loop, so racing calls interleave differently each round. */
async function stagger(): Promise<void> {
  const turns = Math.floor(Math.random() * 4);
  for (let i = 0; i < turns; i++) {
    if (Math.random() < 0.5) await Promise.resolve();
    else await nextTurn();
  }
}

/** Concurrent callers on the store and its peer: exactly one wins, a resolved one never returns. */
export function raceCases<S extends ContinuationStore>(
  options: DescribeContinuationStoreOptions<S>,
): ContractCase<S>[] {
  const rounds = options.raceRounds ?? 60;
  return [
    {
      group: 'races across two instances',
      name: `markResolved: exactly one of ${RACERS} concurrent callers wins`,
      run: async ({ store, peer }) => {
        const s = sampleSuspension();
        await store.save(s);
        const codes = await Promise.all(
          Array.from({ length: RACERS }, (_, i) =>
            codeOf((i % 2 === 0 ? store : peer).markResolved(s.interactionId)),
          ),
        );
        expect(
          codes.filter((c) => c === 'ok'),
          `markResolved is exactly-once: one of ${RACERS} concurrent callers succeeds (outcomes: ${codes})`,
        ).toHaveLength(1);
        expect(
          codes.filter((c) => c === 'already_resolved'),
          `markResolved is exactly-once: the losers get already_resolved (outcomes: ${codes})`,
        ).toHaveLength(RACERS - 1);
      },
    },
    {
      group: 'races across two instances',
      name: `resolve(): exactly one of ${RACERS} concurrent calls gets the resume messages`,
      run: async ({ store, peer }) => {
        const s = sampleSuspension();
        await store.save(s);
        const answer = toolResult(s.toolUseId, 'yes');
        const codes = await Promise.all(
          Array.from({ length: RACERS }, (_, i) =>
            codeOf(resolve(i % 2 === 0 ? store : peer, s, answer)),
          ),
        );
        expect(
          codes.filter((c) => c === 'ok'),
          `an answer is resumed exactly once: one of ${RACERS} concurrent resolve() calls succeeds (outcomes: ${codes})`,
        ).toHaveLength(1);
        expect(
          codes.filter((c) => c === 'already_resolved'),
          `an answer is resumed exactly once: the other resolve() calls get already_resolved (outcomes: ${codes})`,
        ).toHaveLength(RACERS - 1);
      },
    },
    {
      group: 'races across two instances',
      name: `save racing markResolved on the other instance never resurrects the continuation (${rounds} rounds)`,
      run: async ({ store, peer }) => {
        const runId = uniqueId('run');
        for (let round = 0; round < rounds; round++) {
          const first = sampleSuspension({ runId });
          const id = first.interactionId;
          await store.save(first);
          const replacement = sampleSuspension({ interactionId: id, runId, messages: true });
          const [saver, marker] = round % 2 === 0 ? [store, peer] : [peer, store];
          const [saved, marked] = await Promise.all([
            codeOf(stagger().then(() => saver.save(replacement))),
            codeOf(stagger().then(() => marker.markResolved(id))),
          ]);
          const where = `round ${round}: save → ${saved}, markResolved → ${marked}`;
          expect(
            marked,
            `markResolved of an unresolved continuation succeeds, also while it is being replaced (${where})`,
          ).toBe('ok');
          expect(
            ['ok', 'already_resolved'],
            `save over a continuation being resolved either replaces it first or fails with already_resolved (${where})`,
          ).toContain(saved);
          expect(
            await codeOf(peer.load(id)),
            `save never resurrects a resolved continuation: its check and its write must be one atomic step, also against markResolved on another instance (${where}, then load)`,
          ).toBe('already_resolved');
          const listed = (await store.listUnresolved({ runId })).map((x) => x.interactionId);
          expect(
            listed,
            `a resolved continuation is never listed again, also after a racing save (${where})`,
          ).not.toContain(id);
        }
      },
    },
  ];
}
