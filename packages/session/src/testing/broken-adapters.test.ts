// The suite against deliberately broken adapters: each breaks one promise, and the case that
// checks that promise must fail with a message naming it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCheckpoint, type SessionCheckpoint, serializeCheckpoint } from '../checkpoint.js';
import {
  assertSafeThreadId,
  type CheckpointStore,
  type CheckpointSummary,
  conflictError,
  normaliseExpected,
  type PutOptions,
  type StoredCheckpoint,
} from '../checkpoint-store.js';
import { SessionError } from '../errors.js';
import { contractCases } from './contract.js';
import { describeCheckpointStore } from './describe-checkpoint-store.js';
import type { CheckpointStoreSuiteOptions } from './options.js';
import { checkOptions, failureOf, SUITE_OPTION_RULES } from './suite-plumbing.js';

interface Entry {
  revision: number;
  json: string | null;
}

/** A correct store over a map shared by its instances, with a turn of "I/O" in every call. */
class SharedMapStore implements CheckpointStore {
  constructor(readonly entries: Map<string, Entry>) {}

  async get(threadId: string): Promise<StoredCheckpoint | undefined> {
    assertSafeThreadId(threadId);
    await nextTurn();
    const entry = this.entries.get(threadId);
    if (entry?.json == null) return undefined;
    return { threadId, revision: entry.revision, checkpoint: parseCheckpoint(entry.json) };
  }

  async put(threadId: string, checkpoint: SessionCheckpoint, options: PutOptions = {}) {
    assertSafeThreadId(threadId);
    const expected = normaliseExpected(options.expectedRevision);
    const json = serializeCheckpoint(parseCheckpoint(checkpoint));
    await nextTurn();
    return this.write(threadId, expected, json);
  }

  /** Checks the revision and writes in one step. */
  protected async write(threadId: string, expected: number | null, json: string) {
    const entry = this.entries.get(threadId);
    const live = entry?.json == null ? null : entry.revision;
    if (live !== expected) throw conflictError(threadId, expected, live);
    const revision = (entry?.revision ?? 0) + 1;
    this.entries.set(threadId, { revision, json });
    return revision;
  }

  async delete(threadId: string): Promise<boolean> {
    assertSafeThreadId(threadId);
    await nextTurn();
    const entry = this.entries.get(threadId);
    if (entry?.json == null) return false;
    this.entries.set(threadId, { revision: entry.revision + 1, json: null });
    return true;
  }

  async list(): Promise<CheckpointSummary[]> {
    await nextTurn();
    return [...this.entries.entries()]
      .filter(([, e]) => e.json !== null)
      .map(([threadId, e]) => ({ threadId, revision: e.revision }))
      .sort((a, b) => (a.threadId < b.threadId ? -1 : 1));
  }
}

/** Checks the revision, then writes a turn later: two writers can both pass the check. */
class UnguardedPutStore extends SharedMapStore {
  protected override async write(threadId: string, expected: number | null, json: string) {
    const entry = this.entries.get(threadId);
    const live = entry?.json == null ? null : entry.revision;
    if (live !== expected) throw conflictError(threadId, expected, live);
    await nextTurn();
    const revision = (entry?.revision ?? 0) + 1;
    this.entries.set(threadId, { revision, json });
    return revision;
  }
}

/** Forgets a deleted thread entirely (no tombstone): its revisions start over at 1. */
class NoTombstoneStore extends SharedMapStore {
  override async delete(threadId: string): Promise<boolean> {
    await nextTurn();
    return this.entries.delete(threadId);
  }
}

/** A store whose backend is down; `fail` says how it reports that. */
class DownStore implements CheckpointStore {
  constructor(readonly fail: () => never) {}
  async get(): Promise<StoredCheckpoint | undefined> {
    this.fail();
  }
  async put(): Promise<number> {
    this.fail();
  }
  async delete(): Promise<boolean> {
    this.fail();
  }
  async list(): Promise<CheckpointSummary[]> {
    this.fail();
  }
}

function options(
  make: (entries: Map<string, Entry>) => CheckpointStore,
  extra: Partial<CheckpointStoreSuiteOptions> = {},
): CheckpointStoreSuiteOptions {
  const entries = new Map<string, Entry>();
  return {
    name: 'broken',
    create: () => {
      entries.clear();
      return make(entries);
    },
    peer: () => make(entries),
    failing: null,
    processes: null,
    ...extra,
  };
}

/** The failure message of the case named `name` with `opts`, or 'the case passed'. */
function failure(opts: CheckpointStoreSuiteOptions, name: string): Promise<string> {
  return failureOf(opts, contractCases(opts), name);
}

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe('the conformance suite catches deliberately broken adapters', () => {
  it('a correct store over the same shared map passes the cases the breaks fail', async () => {
    const correct = options((entries) => new SharedMapStore(entries));
    for (const name of ['two writers with the same revision', '6 concurrent writers']) {
      expect(await failure(correct, name)).toBe('the case passed');
    }
  });

  it('a check-then-write put: the two-writer case names the atomic revision check', async () => {
    const message = await failure(
      options((entries) => new UnguardedPutStore(entries)),
      'two writers with the same revision',
    );
    expect(message).toContain('put checks the revision and writes in one atomic step');
  });

  it('raw driver errors: the failing-backend case names the normalisation', async () => {
    const raw = () =>
      new DownStore(() => {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
          code: 'ECONNREFUSED',
        });
      });
    const message = await failure(
      options((entries) => new SharedMapStore(entries), { failing: raw }),
      'every method rejects with unavailable',
    );
    expect(message).toContain('get on a failing backend must reject with a SessionError');
  });

  it('an unavailable error without its cause: the failing-backend case names the cause', async () => {
    const causeless = () =>
      new DownStore(() => {
        throw new SessionError('unavailable', 'the database is down');
      });
    const message = await failure(
      options((entries) => new SharedMapStore(entries), { failing: causeless }),
      'every method rejects with unavailable',
    );
    expect(message).toContain("failures of the backend keep the original error: get's");
  });

  it('a delete that leaves no tombstone: the case names revisions that never repeat, not "expected 1 to be greater than 1"', async () => {
    const message = await failure(
      options((entries) => new NoTombstoneStore(entries)),
      'revisions never repeat across delete',
    );
    expect(message).toContain(
      'revisions never repeat across delete: a thread created again after a delete gets a revision greater than 1, the one before the delete (a tombstone must remain)',
    );
  });

  it('processes.kills 0 skips the SIGKILL case, not the race', () => {
    const processes = { module: new URL(import.meta.url), args: () => ({}), kills: 0 };
    const cases = contractCases(options((entries) => new SharedMapStore(entries), { processes }));
    const skipped = (start: string) => cases.find((c) => c.name.startsWith(start))?.skip;
    expect(skipped('4 processes each put')).toBeUndefined();
    expect(skipped('a writing process SIGKILLed')).toBe('processes.kills is 0');
  });

  describe('options are checked when the suite is registered, naming the option', () => {
    const given = options((entries) => new SharedMapStore(entries));
    const suite = '[@x/session] describeCheckpointStore';
    const processes = {
      module: new URL('../../test/fixtures/file-store.mjs', import.meta.url),
      args: () => ({}),
    };

    it('a complete set passes', () => {
      expect(() => checkOptions(suite, given, SUITE_OPTION_RULES)).not.toThrow();
      expect(() => checkOptions(suite, { ...given, processes }, SUITE_OPTION_RULES)).not.toThrow();
    });

    it.each<[string, Record<string, unknown>, string]>([
      [
        'failing',
        { failing: undefined },
        'option "failing" is missing: give a function that returns a store of your adapter whose backend fails on every call, or null',
      ],
      [
        'peer',
        { peer: undefined },
        'option "peer" is missing: give a function that returns a second instance',
      ],
      [
        'processes',
        { processes: undefined },
        'option "processes" is missing: give { module, args }',
      ],
      ['create', { create: undefined }, 'option "create" is missing: give a function'],
      [
        'processes.module',
        { processes: { args: () => ({}) } },
        'option "processes.module" is missing',
      ],
      [
        'a relative processes.module',
        { processes: { ...processes, module: 'store.mjs' } },
        'option "processes.module" is "store.mjs": give the absolute path or file: URL',
      ],
      [
        'processes.args',
        { processes: { module: processes.module, args: {} } },
        'option "processes.args" is an object: give a function',
      ],
      [
        'processes.rounds',
        { processes: { ...processes, rounds: 0 } },
        'option "processes.rounds" is 0: give an integer of at least 1',
      ],
    ])('%s', (_, change, message) => {
      const call = () =>
        describeCheckpointStore({ ...given, ...change } as unknown as CheckpointStoreSuiteOptions);
      expect(call).toThrow(TypeError);
      expect(call).toThrow(`${suite}: ${message}`);
    });
  });

  describe('across processes, a file store that checks the revision and then writes in place', () => {
    const fixture = new URL('../../test/fixtures/naive-file-store.mjs', import.meta.url);
    const naive = (extra: { rounds?: number; kills?: number }) =>
      options(() => new SharedMapStore(new Map()), {
        create: async () => {
          const directory = await mkdtemp(join(tmpdir(), 'x-session-naive-'));
          dirs.push(directory);
          // The parent reads and writes through the same naive store as the children.
          const module = await import(fixture.href);
          return Object.assign(module.default({ directory }) as CheckpointStore, { directory });
        },
        processes: {
          module: fixture,
          args: (store) => ({ directory: (store as unknown as { directory: string }).directory }),
          ...extra,
        },
      });

    it('the process race names the atomic put across processes', async () => {
      const message = await failure(naive({ rounds: 20 }), '4 processes each put');
      expect(message).toMatch(
        /put is atomic across processes|no update is lost|loses across processes gets conflict/,
      );
    }, 120_000);

    // Only some kills land inside the in-place write (fewer on a loaded machine), and the
    // case stops at the first torn checkpoint: a generous allowance costs nothing, and a
    // miss becomes negligible.
    it('SIGKILL during put names the torn checkpoint', async () => {
      const message = await failure(naive({ kills: 128 }), 'a writing process SIGKILLed');
      expect(message).toContain('a put killed at any moment leaves the latest checkpoint whole');
    }, 120_000);
  });
});
