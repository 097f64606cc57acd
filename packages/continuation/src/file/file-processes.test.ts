import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeSuspension } from '../codec.js';
import { createSuspension } from '../suspension.js';
import { sampleSuspension } from '../testing/index.js';
import { FileContinuationStore } from './index.js';

// These tests run real OS processes over the BUILT package, as an application would.
const fixtures = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
const built = existsSync(fileURLToPath(new URL('../../dist/file/index.js', import.meta.url)));

// Every live child, so a failing or timed-out test never leaves a writer running.
const live = new Set<ChildProcess>();

function start(script: string, args: string[]): ChildProcess {
  const child = fork(join(fixtures, script), args, {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) =>
      reject(new Error(`child exited (${code}) before answering`));
    child.once('exit', onExit);
    child.once('message', (m) => {
      child.off('exit', onExit);
      resolve(m as T);
    });
  });
}

async function killAll(): Promise<void> {
  await Promise.all(
    [...live].map((child) => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      return exited;
    }),
  );
}

const PROCESSES = 4;
const ROUNDS = 150;
// The reliability suite (`pnpm test:reliability`, run by CI) kills 200 savers per store.
const KILLS = 32;
const LANES = 4;

describe.skipIf(!built && process.env.CI !== 'true')(
  'FileContinuationStore across OS processes (build the package first)',
  () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'x-continuation-proc-'));
    });
    afterAll(async () => {
      await killAll();
      await rm(dir, { recursive: true, force: true });
    });

    it(`markResolved, resolve or load+resolve on one id: exactly one of ${PROCESSES} processes wins, ${ROUNDS} rounds`, async () => {
      const store = new FileContinuationStore(join(dir, 'race'));
      const children = Array.from({ length: PROCESSES }, () =>
        start('race-child.mjs', [store.dir]),
      );
      try {
        await Promise.all(children.map((c) => nextMessage(c)));
        for (let round = 0; round < ROUNDS; round++) {
          const s = sampleSuspension();
          await store.save(s);
          const mode = (['markResolved', 'resolve', 'load+resolve'] as const)[round % 3];
          const answers = children.map((c) => nextMessage<{ outcome: string }>(c));
          const record = encodeSuspension(s);
          for (const c of children) c.send({ round, mode, record });
          const outcomes = (await Promise.all(answers)).map((a) => a.outcome);
          expect(
            outcomes.filter((o) => o === 'won'),
            `round ${round}: ${outcomes}`,
          ).toHaveLength(1);
          expect(outcomes.filter((o) => o === 'already_resolved')).toHaveLength(PROCESSES - 1);
          await expect(store.load(s.interactionId)).rejects.toMatchObject({
            code: 'already_resolved',
          });
        }
      } finally {
        for (const c of children) c.kill('SIGKILL');
      }
    }, 120_000);

    it(`a saver SIGKILLed at random moments ${KILLS} times never leaves a torn record`, async () => {
      const store = new FileContinuationStore(join(dir, 'crash'));
      // Lanes of savers run side by side (each on its own ids) to keep the test short.
      const lane = async (name: string) => {
        const ids = ['a', 'b', 'c'].map((x) => `crash-${name}-${x}`);
        // Seed every record so "the old version" always exists.
        for (const id of ids) {
          const toolUseId = `toolu_${id}`;
          const assistant = {
            role: 'assistant' as const,
            content: [
              { type: 'tool_use' as const, id: toolUseId, name: 'ask_user', input: { turns: 0 } },
            ],
          };
          const messages = [
            { role: 'user' as const, content: [{ type: 'text' as const, text: 'go on' }] },
            assistant,
          ];
          await store.save(createSuspension({ interactionId: id, toolUseId, assistant, messages }));
        }
        for (let kill = 0; kill < KILLS / LANES; kill++) {
          const child = start('crash-child.mjs', [
            store.dir,
            ids.join(','),
            String((kill % 10) * 30),
          ]);
          const exited = new Promise((resolve) => child.once('exit', resolve));
          await nextMessage(child);
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
          child.kill('SIGKILL');
          await exited;
          for (const id of ids) {
            const s = await store.load(id); // a torn record would throw `invalid`
            const turns = (s.toolInput as { turns: number }).turns;
            expect(s.messages).toHaveLength(turns * 2 + 2);
          }
        }
        return ids;
      };
      const ids = (
        await Promise.all(Array.from({ length: LANES }, (_, i) => lane(String(i))))
      ).flat();
      // Stray temp files of killed writes are ignored, not listed.
      const listed = (await store.listUnresolved()).map((s) => s.interactionId);
      expect(listed.filter((id) => id.startsWith('crash-')).sort()).toEqual(ids.sort());
    }, 300_000);
  },
);
