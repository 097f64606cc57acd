import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { CheckpointStore } from '../checkpoint-store.js';
import { SessionError } from '../errors.js';
import type { ContractCase } from './contract-case.js';
import type { CheckpointStoreProcesses, CheckpointStoreSuiteOptions } from './options.js';
import { sampleCheckpoint } from './sample.js';
import { forkChild, jitter, moduleHref, runLanes } from './suite-plumbing.js';

const CHILD = new URL('./process-child.js', import.meta.url);
const LANES = 4;

interface RaceReport {
  wins: Array<{ expected: number | null; revision: number; attempt: number }>;
  losses: string[];
}

function childArgs<S extends CheckpointStore>(processes: CheckpointStoreProcesses<S>, store: S) {
  return [moduleHref(processes.module), JSON.stringify(processes.args(store) ?? null)];
}

/** The cross-process cases: writers racing on one revision, and SIGKILL during put. */
export function processCases<S extends CheckpointStore>(
  options: CheckpointStoreSuiteOptions<S>,
): ContractCase<S>[] {
  const { processes } = options;
  const skip =
    processes === null
      ? { skip: 'the adapter declares no cross-process use (processes: null)' }
      : {};
  const racers = processes?.racers ?? 4;
  const rounds = processes?.rounds ?? 30;
  const kills = processes?.kills ?? 32;
  const lanes = Math.max(1, Math.min(LANES, kills));
  return [
    {
      group: 'across OS processes',
      name: `${racers} processes each put ${rounds} times at the revision they read: one winner per revision, no update lost`,
      timeout: 300_000,
      ...skip,
      run: async ({ store }) => {
        if (processes === null) return;
        const args = childArgs(processes, store);
        const children = Array.from({ length: racers }, () => forkChild(CHILD, args));
        try {
          await Promise.all(children.map((c) => c.next()));
          const threadId = `race-${randomBytes(4).toString('hex')}`;
          const base = await store.put(threadId, sampleCheckpoint(0));
          const reports = children.map((c) => c.next<RaceReport>());
          children.forEach((c, i) => {
            c.send({
              op: 'race',
              threadId,
              writer: `w${i}`,
              attempts: rounds,
              checkpoint: sampleCheckpoint(0),
            });
          });
          const done = await Promise.all(reports);
          const losses = done.flatMap((r) => r.losses);
          expect(
            losses.filter((l) => l !== 'conflict'),
            'a writer that loses across processes gets conflict, nothing else',
          ).toEqual([]);
          const wins = done
            .flatMap((r, i) => r.wins.map((w) => ({ ...w, writer: `w${i}` })))
            .sort((a, b) => a.revision - b.revision);
          expect(
            wins.length + losses.length,
            'every put across processes either wins or loses with conflict',
          ).toBe(racers * rounds);
          let previous: number = base;
          for (const win of wins) {
            expect(
              win.expected,
              `put is atomic across processes: each revision is won by exactly one writer, quoting the revision before it (win of ${win.writer} at revision ${win.revision})`,
            ).toBe(previous);
            previous = win.revision;
          }
          const stored = await store.get(threadId);
          const last = wins.at(-1);
          expect(
            stored?.revision,
            'no update is lost across processes: the last winner is stored',
          ).toBe(last?.revision ?? base);
          expect(
            stored?.checkpoint.runtimeState,
            "no update is lost across processes: the stored checkpoint is the last winner's",
          ).toMatchObject(last === undefined ? {} : { writer: last.writer, attempt: last.attempt });
        } finally {
          await Promise.all(children.map((c) => c.kill()));
        }
      },
    },
    {
      group: 'across OS processes',
      name: `a writing process SIGKILLed at random moments (${kills} times) leaves a whole latest checkpoint and a writable thread`,
      timeout: 300_000,
      ...(kills < 1 ? { skip: 'processes.kills is 0' } : skip),
      run: async ({ store }) => {
        if (processes === null) return;
        const args = childArgs(processes, store);
        const prefix = `crash-${randomBytes(4).toString('hex')}`;
        const lane = async (name: number, stopped: () => boolean) => {
          const threadId = `${prefix}-${name}`;
          for (let kill = name; kill < kills && !stopped(); kill += lanes) {
            const writer = `k${kill}`;
            const child = forkChild(CHILD, args);
            try {
              await child.next();
              child.send({ op: 'writeForever', threadId, writer, checkpoint: sampleCheckpoint(1) });
              await child.next();
              await jitter(20);
            } finally {
              await child.kill();
            }
            const stored = await store.get(threadId).catch((error: unknown) => error);
            expect(
              stored instanceof Error ? String(stored) : 'ok',
              `a put killed at any moment leaves the latest checkpoint whole (get of ${threadId} after kill ${kill})`,
            ).toBe('ok');
            const latest = stored as Awaited<ReturnType<CheckpointStore['get']>>;
            expect(
              latest?.checkpoint.runtimeState.writer,
              `a put that returned stays stored after a kill (${threadId} after kill ${kill})`,
            ).toBe(writer);
            let base = latest?.revision ?? null;
            const next = await store
              .put(threadId, sampleCheckpoint(2), { expectedRevision: base })
              .catch(async (error: unknown) => {
                // A database server may still commit the put that was in flight when its client died.
                if (!SessionError.hasCode(error, 'conflict')) throw error;
                const late = await store.get(threadId);
                expect(
                  late?.checkpoint.runtimeState.writer,
                  `only the killed writer's last put can land after the kill, and whole (${threadId} after kill ${kill})`,
                ).toBe(writer);
                expect(
                  late?.revision,
                  `a put that lands after the kill gets a greater revision (${threadId} after kill ${kill})`,
                ).toBeGreaterThan(base ?? 0);
                base = late?.revision ?? null;
                return store.put(threadId, sampleCheckpoint(2), { expectedRevision: base });
              });
            expect(
              next,
              `after a kill the thread stays writable at the revision read (${threadId})`,
            ).toBeGreaterThan(base ?? 0);
          }
        };
        await runLanes(lanes, lane);
      },
    },
  ];
}
