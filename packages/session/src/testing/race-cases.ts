import { expect } from 'vitest';
import type { CheckpointStore } from '../checkpoint-store.js';
import { SessionError } from '../errors.js';
import type { ContractCase } from './contract-case.js';
import { sampleCheckpoint } from './sample.js';

const WRITERS = 6;
const ROUNDS = 5;

/** Writers on the store and its peer quoting one revision: exactly one wins, none is lost. */
export function raceCases<S extends CheckpointStore>(): ContractCase<S>[] {
  return [
    {
      group: 'races across two instances',
      name: 'two writers with the same revision: exactly one wins, the other gets conflict',
      run: async ({ store, peer }) => {
        const base = await store.put('t-1', sampleCheckpoint(0));
        const results = await Promise.allSettled([
          store.put('t-1', sampleCheckpoint(1), { expectedRevision: base }),
          peer.put('t-1', sampleCheckpoint(2), { expectedRevision: base }),
        ]);
        const outcomes = results.map((r) =>
          r.status === 'fulfilled' ? `revision ${r.value}` : String(r.reason),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        expect(
          won,
          `put checks the revision and writes in one atomic step: of two writers quoting revision ${base} on two instances exactly one wins (outcomes: ${outcomes.join('; ')})`,
        ).toHaveLength(1);
        const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(
          SessionError.hasCode(lost.reason, 'conflict'),
          `the writer that lost gets conflict (got ${String(lost.reason)})`,
        ).toBe(true);
        const winner = results[0]?.status === 'fulfilled' ? 1 : 2;
        const stored = await peer.get('t-1');
        expect(stored?.revision, 'the stored revision is the one the winner got').toBe(
          (won[0] as PromiseFulfilledResult<number>).value,
        );
        expect(stored?.checkpoint, "the stored checkpoint is the winner's").toEqual(
          sampleCheckpoint(winner),
        );
      },
    },
    {
      group: 'races across two instances',
      name: 'two creators of one thread: exactly one wins',
      run: async ({ store, peer }) => {
        const results = await Promise.allSettled([
          store.put('t-new', sampleCheckpoint(1)),
          peer.put('t-new', sampleCheckpoint(2)),
        ]);
        expect(
          results.filter((r) => r.status === 'fulfilled'),
          'creating a thread is atomic: of two creators on two instances exactly one wins',
        ).toHaveLength(1);
        const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(
          SessionError.hasCode(lost.reason, 'conflict'),
          `the creator that lost gets conflict (got ${String(lost.reason)})`,
        ).toBe(true);
      },
    },
    {
      group: 'races across two instances',
      name: `${WRITERS} concurrent writers over ${ROUNDS} rounds: one winner per revision, no lost update`,
      run: async ({ store, peer }) => {
        let revision = await store.put('t-race', sampleCheckpoint(0));
        for (let round = 0; round < ROUNDS; round++) {
          const writers = Array.from({ length: WRITERS }, (_, i) =>
            (i % 2 === 0 ? store : peer).put('t-race', sampleCheckpoint(round * 10 + i), {
              expectedRevision: revision,
            }),
          );
          const results = await Promise.allSettled(writers);
          const won = results.flatMap((r, i) =>
            r.status === 'fulfilled' ? [{ i, revision: r.value }] : [],
          );
          expect(
            won,
            `put is atomic: one of ${WRITERS} writers quoting revision ${revision} wins (round ${round})`,
          ).toHaveLength(1);
          for (const r of results) {
            if (r.status === 'rejected') {
              expect(
                SessionError.hasCode(r.reason, 'conflict'),
                `a losing writer gets conflict (got ${String(r.reason)})`,
              ).toBe(true);
            }
          }
          const stored = await store.get('t-race');
          expect(stored?.revision, 'no update is lost: the stored revision is the winner').toBe(
            won[0]?.revision,
          );
          expect(
            stored?.checkpoint,
            `no update is lost: the stored checkpoint is the winner's (round ${round})`,
          ).toEqual(sampleCheckpoint(round * 10 + (won[0]?.i ?? -1)));
          revision = won[0]?.revision ?? -1;
        }
      },
    },
  ];
}
