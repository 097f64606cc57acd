import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContinuationError } from '@x/continuation';
import { FileContinuationStore } from '@x/continuation/file';
import { migrate, PostgresContinuationStore } from '@x/continuation-postgres';
import { SessionError } from '@x/session';
import { FileCheckpointStore } from '@x/session/file';
import { drizzle } from 'drizzle-orm/postgres-js';
import { checkpointAt, counterOf, suspensionAt, turnsOf } from '../fixtures.js';
import { knob } from '../knobs.js';
import { exited, forkChild, nextMessage, sleep } from '../proc.js';
import type { Tally } from '../report.js';
import { client, createDatabase } from '../server.js';

/** Kills per adapter (the issue asks for at least 200). */
export const KILLS = knob('RELIABILITY_KILLS', 200, 24);
const LANES = 2;
const IDS_PER_LANE = 3;

interface Adapter {
  /** Seeds version 0 of each id. */
  seed(id: string): Promise<void>;
  /** The version stored now (throws if the record does not load whole). */
  version(id: string): Promise<number>;
  /** Writes the next version from this process. */
  next(id: string, version: number): Promise<void>;
  /** The ids the store lists (a temp file listed as a record would show up here). */
  listed(): Promise<string[]>;
  /** Names in the folder that are temp files of an interrupted write. */
  temps(): Promise<number>;
  isTyped(error: unknown): boolean;
}

function continuationAdapter(dir: string): Adapter {
  const store = new FileContinuationStore(dir);
  return {
    seed: (id) => store.save(suspensionAt(id, 0)),
    async version(id) {
      const turns = turnsOf(await store.load(id));
      if (typeof turns === 'string') throw new Error(`mixed record: ${turns}`);
      return turns;
    },
    next: (id, version) => store.save(suspensionAt(id, version + 1)),
    listed: async () => (await store.listUnresolved()).map((s) => s.interactionId),
    temps: async () => (await readdir(dir)).filter((n) => n.startsWith('.')).length,
    isTyped: ContinuationError.is,
  };
}

async function postgresContinuationAdapter(
  url: string,
): Promise<Adapter & { close(): Promise<void> }> {
  const sql = client(url, 2);
  const db = drizzle({ client: sql });
  await migrate(db);
  const store = new PostgresContinuationStore(db);
  return {
    seed: (id) => store.save(suspensionAt(id, 0)),
    async version(id) {
      const turns = turnsOf(await store.load(id));
      if (typeof turns === 'string') throw new Error(`mixed record: ${turns}`);
      return turns;
    },
    next: (id, version) => store.save(suspensionAt(id, version + 1)),
    listed: async () => (await store.listUnresolved()).map((s) => s.interactionId),
    temps: async () => 0,
    isTyped: ContinuationError.is,
    close: () => sql.end({ timeout: 5 }),
  };
}

function checkpointAdapter(dir: string): Adapter {
  const store = new FileCheckpointStore(dir);
  return {
    seed: async (id) => {
      await store.put(id, checkpointAt(0), { expectedRevision: null });
    },
    async version(id) {
      const stored = await store.get(id);
      if (!stored) throw new Error('no checkpoint');
      const n = counterOf(stored.checkpoint);
      if (typeof n === 'string') throw new Error(`mixed record: ${n}`);
      return n;
    },
    async next(id, version) {
      const stored = await store.get(id);
      await store.put(id, checkpointAt(version + 1), {
        expectedRevision: stored?.revision ?? null,
      });
    },
    listed: async () => (await store.list()).map((s) => s.threadId),
    async temps() {
      let count = 0;
      for (const thread of await readdir(dir)) {
        count += (await readdir(join(dir, thread))).filter((n) => n.startsWith('.tmp-')).length;
      }
      return count;
    },
    isTyped: SessionError.is,
  };
}

/**
 * A child saving in a loop is SIGKILLed at a random moment, KILLS times per adapter (the
 * file stores, and the continuation store on PostgreSQL). After
 * each kill every record must load whole at the version seen before the kill or a newer one
 * (older = a lost write), no temp file may be listed as a record, and a save from this
 * process must work and be read back.
 */
export async function crashScenario(
  tally: Tally,
  mode: 'continuation' | 'session' | 'continuation-postgres',
): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), `x-rel-crash-${mode}-`));
  const database = mode === 'continuation-postgres' ? await createDatabase() : undefined;
  const postgresAdapter = database && (await postgresContinuationAdapter(database.url));
  const adapter =
    postgresAdapter ??
    (mode === 'continuation' ? continuationAdapter(root) : checkpointAdapter(root));
  // The child writes where the adapter reads: the folder, or the database.
  const target = database?.url ?? root;
  let tornSeen = 0;
  try {
    const lane = async (laneNo: number) => {
      const ids = Array.from({ length: IDS_PER_LANE }, (_, i) => `crash-${laneNo}-${i}`);
      const known = new Map<string, number>();
      for (const id of ids) {
        await adapter.seed(id);
        known.set(id, 0);
      }
      for (let kill = 0; kill < KILLS / LANES; kill++) {
        const child = forkChild('crash-writer', [mode, target, ids.join(',')]);
        await nextMessage(child);
        await sleep(Math.random() * 25);
        child.kill('SIGKILL');
        await exited(child);
        tally.faults++;
        for (const id of ids) {
          tally.cases++;
          let version: number;
          try {
            version = await adapter.version(id);
          } catch (error) {
            tally.loss(
              `${id} after kill ${kill}: does not load whole: ${(error as Error).message}`,
            );
            continue;
          }
          const before = known.get(id) ?? 0;
          if (version < before) {
            tally.loss(
              `${id} after kill ${kill}: version ${version} < ${before} seen before the kill`,
            );
          }
          // The next save works, and is what loads afterwards.
          try {
            await adapter.next(id, version);
            const after = await adapter.version(id);
            tally.check(
              after === version + 1,
              () => `${id}: saved ${version + 1}, loaded ${after}`,
            );
            known.set(id, after);
          } catch (error) {
            tally.fail(`${id} after kill ${kill}: next save failed: ${(error as Error).message}`);
          }
        }
      }
      return ids;
    };
    const expected = (await Promise.all(Array.from({ length: LANES }, (_, i) => lane(i)))).flat();
    tornSeen = await adapter.temps();
    const listed = (await adapter.listed()).sort();
    tally.check(
      JSON.stringify(listed) === JSON.stringify(expected.sort()),
      () =>
        `listed ${JSON.stringify(listed)}, want ${JSON.stringify(expected)} (a temp file listed as a record?)`,
    );
    tally.note(
      `${tally.faults} SIGKILLs of a saving child; ${tornSeen} interrupted-write temp file(s) left on disk and none read as a record`,
    );
  } catch (error) {
    tally.fail(`untyped or unexpected error: ${(error as Error).stack ?? error}`);
  } finally {
    await rm(root, { recursive: true, force: true });
    await postgresAdapter?.close();
    await database?.drop();
  }
}
