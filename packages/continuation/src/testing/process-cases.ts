import { expect } from 'vitest';
import type { ContinuationStore } from '../store.js';
import { SUSPENSION_VERSION, type Suspension } from '../suspension.js';
import { codeOf } from './assertions.js';
import type { ContractCase } from './contract-case.js';
import { sampleSuspension, uniqueId } from './fixtures.js';
import type { ContinuationStoreProcesses, DescribeContinuationStoreOptions } from './options.js';
import { forkChild, jitter, moduleHref, runLanes, type SuiteChild } from './suite-plumbing.js';

const CHILD = new URL('./process-child.js', import.meta.url);
const LANES = 4;
const MODES = ['markResolved', 'load+markResolved', 'save+markResolved'] as const;

type Outcome = { outcome: string };

async function startChildren<S extends ContinuationStore>(
  processes: ContinuationStoreProcesses<S>,
  store: S,
  count: number,
): Promise<SuiteChild[]> {
  const args = [moduleHref(processes.module), JSON.stringify(processes.args(store) ?? null)];
  const children = Array.from({ length: count }, () => forkChild(CHILD, args));
  await Promise.all(children.map((c) => c.next()));
  return children;
}

function untyped(outcomes: string[]): string | undefined {
  return outcomes.find((o) => o.startsWith('untyped'));
}

/** The cross-process cases: a markResolved race and SIGKILL during save, in real OS processes. */
export function processCases<S extends ContinuationStore>(
  options: DescribeContinuationStoreOptions<S>,
): ContractCase<S>[] {
  const { processes } = options;
  const skip =
    processes === null
      ? { skip: 'the adapter declares no cross-process use (processes: null)' }
      : {};
  const racers = processes?.racers ?? 4;
  const rounds = processes?.rounds ?? 60;
  const kills = processes?.kills ?? 32;
  const lanes = Math.max(1, Math.min(LANES, kills));
  return [
    {
      group: 'across OS processes',
      name: `${racers} processes race markResolved, load+markResolved and save on one id: exactly one mark wins and it stays resolved (${rounds} rounds)`,
      timeout: 300_000,
      ...skip,
      run: async ({ store }) => {
        if (processes === null) return;
        const children = await startChildren(processes, store, racers);
        try {
          const ids: string[] = [];
          const runId = uniqueId('run');
          for (let round = 0; round < rounds; round++) {
            const s = sampleSuspension({ runId });
            ids.push(s.interactionId);
            await store.save(s);
            const mode = MODES[round % MODES.length];
            const replacement = sampleSuspension({
              interactionId: s.interactionId,
              messages: true,
            });
            const answers = children.map((c) => c.next<Outcome>());
            children.forEach((c, i) => {
              if (mode === 'save+markResolved' && i % 2 === 1) {
                c.send({ op: 'save', suspension: replacement });
              } else {
                c.send({
                  op: mode === 'save+markResolved' ? 'markResolved' : mode,
                  id: s.interactionId,
                });
              }
            });
            const outcomes = (await Promise.all(answers)).map((a) => a.outcome);
            const where = `round ${round} (${mode}): ${outcomes.join(', ')}`;
            expect(
              untyped(outcomes),
              `every failure is a ContinuationError, also in another process (${where})`,
            ).toBeUndefined();
            const marks =
              mode === 'save+markResolved' ? outcomes.filter((_, i) => i % 2 === 0) : outcomes;
            expect(
              marks.filter((o) => o === 'ok'),
              `markResolved is exactly-once across processes: one caller wins (${where})`,
            ).toHaveLength(1);
            expect(
              marks.filter((o) => o === 'already_resolved'),
              `markResolved is exactly-once across processes: every loser gets already_resolved (${where})`,
            ).toHaveLength(marks.length - 1);
            expect(
              await codeOf(store.load(s.interactionId)),
              `a continuation resolved in another process stays resolved, also after a racing save (${where}, then load)`,
            ).toBe('already_resolved');
          }
          const listed = new Set(
            (await store.listUnresolved({ runId })).map((x) => x.interactionId),
          );
          expect(
            ids.filter((id) => listed.has(id)),
            'a resolved continuation is never listed again',
          ).toEqual([]);
        } finally {
          await Promise.all(children.map((c) => c.kill()));
        }
      },
    },
    {
      group: 'across OS processes',
      name: `a saving process SIGKILLed at random moments (${kills} times) never leaves a torn record`,
      timeout: 300_000,
      ...(kills < 1 ? { skip: 'processes.kills is 0' } : skip),
      run: async ({ store }) => {
        if (processes === null) return;
        const args = [moduleHref(processes.module), JSON.stringify(processes.args(store) ?? null)];
        const prefix = uniqueId('crash');
        const lane = async (name: number, stopped: () => boolean): Promise<string[]> => {
          const ids = ['a', 'b', 'c'].map((x) => `${prefix}-${name}-${x}`);
          for (let kill = name; kill < kills && !stopped(); kill += lanes) {
            const child = forkChild(CHILD, args);
            try {
              await child.next();
              child.send({
                op: 'saveForever',
                ids,
                start: (kill % 10) * 30,
                version: SUSPENSION_VERSION,
                runId: prefix,
              });
              await child.next();
              await jitter(20);
            } finally {
              await child.kill();
            }
            for (const id of ids) {
              const loaded = await store.load(id).catch((error: unknown) => error);
              expect(
                loaded instanceof Error ? String(loaded) : 'ok',
                `a save killed at any moment leaves the old record or the new one, whole (load of ${id} after kill ${kill})`,
              ).toBe('ok');
              const s = loaded as Suspension;
              const turns = (s.toolInput as { turns: number }).turns;
              expect(
                s.messages,
                `a save killed at any moment leaves one record, not a mix of two (${id} after kill ${kill})`,
              ).toHaveLength(turns * 2 + 2);
            }
          }
          return ids;
        };
        const ids = (await runLanes(lanes, lane)).flat();
        const listed = (await store.listUnresolved({ runId: prefix })).map((s) => s.interactionId);
        expect(
          listed.sort(),
          'after killed saves, listUnresolved lists each continuation once and nothing half-written',
        ).toEqual(ids.sort());
        await store.save(sampleSuspension({ interactionId: ids[0] ?? prefix }));
      },
    },
  ];
}
