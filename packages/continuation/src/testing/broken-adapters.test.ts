// The suite against deliberately broken adapters: each breaks one promise, and the case that
// checks that promise must fail with a message naming it.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeSuspension } from '../codec.js';
import { ContinuationError } from '../errors.js';
import { FileContinuationStore } from '../file/index.js';
import { alreadyResolved, notFound } from '../memory.js';
import {
  type ContinuationStore,
  compareSuspensions,
  type ListUnresolvedFilter,
  matchesFilter,
  prepareSave,
} from '../store.js';
import type { Suspension } from '../suspension.js';
import { contractCases } from './contract.js';
import { describeContinuationStore } from './describe-store.js';
import { type DescribeContinuationStoreOptions, OPTION_RULES } from './options.js';
import { checkOptions, failureOf } from './suite-plumbing.js';

interface Entry {
  text: string;
  resolved: boolean;
}

/** A correct store over a map shared by its instances, with a turn of "I/O" in every call. */
class SharedMapStore implements ContinuationStore {
  constructor(readonly entries: Map<string, Entry>) {}

  async save(suspension: Suspension): Promise<void> {
    const { suspension: s, text } = prepareSave(suspension);
    await nextTurn();
    if (this.entries.get(s.interactionId)?.resolved) throw alreadyResolved(s.interactionId);
    this.entries.set(s.interactionId, { text, resolved: false });
  }

  async load(id: string): Promise<Suspension> {
    await nextTurn();
    const entry = this.entries.get(id);
    if (entry === undefined) throw notFound(id);
    if (entry.resolved) throw alreadyResolved(id);
    return decodeSuspension(JSON.parse(entry.text));
  }

  async markResolved(id: string): Promise<void> {
    await nextTurn();
    const entry = this.entries.get(id);
    if (entry === undefined) throw notFound(id);
    if (entry.resolved) throw alreadyResolved(id);
    entry.resolved = true;
  }

  async listUnresolved(filter?: ListUnresolvedFilter): Promise<Suspension[]> {
    await nextTurn();
    return [...this.entries.values()]
      .filter((e) => !e.resolved)
      .map((e) => decodeSuspension(JSON.parse(e.text)))
      .filter((s) => matchesFilter(s, filter))
      .sort(compareSuspensions);
  }
}

/** Checks "resolved?" and writes in two steps: a markResolved in between is undone. */
class UnguardedSaveStore extends SharedMapStore {
  override async save(suspension: Suspension): Promise<void> {
    const { suspension: s, text } = prepareSave(suspension);
    if (this.entries.get(s.interactionId)?.resolved) throw alreadyResolved(s.interactionId);
    await nextTurn();
    this.entries.set(s.interactionId, { text, resolved: false });
  }
}

/** Reads, then marks: two callers can both see it unresolved and both win. */
class UnatomicMarkStore extends SharedMapStore {
  override async markResolved(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (entry === undefined) throw notFound(id);
    if (entry.resolved) throw alreadyResolved(id);
    await nextTurn();
    entry.resolved = true;
  }
}

/** Ignores a save over a resolved record instead of refusing it (nothing comes back, no error). */
class SilentSaveStore extends SharedMapStore {
  override async save(suspension: Suspension): Promise<void> {
    const { suspension: s, text } = prepareSave(suspension);
    await nextTurn();
    if (this.entries.get(s.interactionId)?.resolved) return;
    this.entries.set(s.interactionId, { text, resolved: false });
  }
}

/** A store whose backend is down; `fail` says how it reports that. */
class DownStore implements ContinuationStore {
  constructor(readonly fail: () => never) {}
  async save(): Promise<void> {
    this.fail();
  }
  async load(): Promise<Suspension> {
    this.fail();
  }
  async markResolved(): Promise<void> {
    this.fail();
  }
  async listUnresolved(): Promise<Suspension[]> {
    this.fail();
  }
}

/** Leaks the driver's own error. */
const rawError = () =>
  new DownStore(() => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  });

/** Normalises the failure but drops the original error. */
const causelessError = () =>
  new DownStore(() => {
    throw new ContinuationError('unavailable', 'the database is down');
  });

function options(
  make: (entries: Map<string, Entry>) => ContinuationStore,
  extra: Partial<DescribeContinuationStoreOptions<ContinuationStore>> = {},
): DescribeContinuationStoreOptions<ContinuationStore> {
  const entries = new Map<string, Entry>();
  return {
    name: 'broken',
    create: () => make(entries),
    peer: () => make(entries),
    failing: null,
    processes: null,
    ...extra,
  };
}

/** The failure message of the case named `name` with `opts`, or 'the case passed'. */
function failure(
  opts: DescribeContinuationStoreOptions<ContinuationStore>,
  name: string,
): Promise<string> {
  return failureOf(opts, contractCases(opts), name);
}

const fixture = (name: string) => new URL(`../../test/fixtures/${name}`, import.meta.url);
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe('the conformance suite catches deliberately broken adapters', () => {
  it('a correct store over the same shared map passes the cases the breaks fail', async () => {
    const correct = options((entries) => new SharedMapStore(entries));
    for (const name of ['save racing markResolved', 'markResolved: exactly one']) {
      expect(await failure(correct, name)).toBe('the case passed');
    }
  });

  it('an unguarded check-then-write save: the save/markResolved race names the resurrection', async () => {
    const message = await failure(
      options((entries) => new UnguardedSaveStore(entries)),
      'save racing markResolved',
    );
    expect(message).toContain('save never resurrects a resolved continuation');
  });

  it('a read-then-write markResolved: the concurrent callers case names exactly-once', async () => {
    const message = await failure(
      options((entries) => new UnatomicMarkStore(entries)),
      'markResolved: exactly one',
    );
    expect(message).toContain('markResolved is exactly-once');
  });

  it('raw driver errors: the failing-backend case names the normalisation', async () => {
    const message = await failure(
      options((entries) => new SharedMapStore(entries), { failing: rawError }),
      'every method rejects with unavailable',
    );
    expect(message).toContain('save on a failing backend must reject with a ContinuationError');
    expect(message).toContain('ECONNREFUSED');
  });

  it('an unavailable error without its cause: the failing-backend case names the cause', async () => {
    const message = await failure(
      options((entries) => new SharedMapStore(entries), { failing: causelessError }),
      'every method rejects with unavailable',
    );
    expect(message).toContain("failures of the backend keep the original error: save's");
  });

  it('save over a resolved continuation that succeeds: the case names the promise, not "got undefined"', async () => {
    const message = await failure(
      options((entries) => new SilentSaveStore(entries)),
      'saving over a resolved suspension',
    );
    expect(message).toContain(
      'save over a resolved continuation fails with already_resolved (a resolved one never comes back): expected a ContinuationError of code already_resolved, got no error at all',
    );
  });

  it('on a shared backing, the corrupt records of one case are not listed in the next', async () => {
    const shared = options((entries) => new SharedMapStore(entries), {
      writeRaw: async (store, id, record) => {
        (store as SharedMapStore).entries.set(id, {
          text: JSON.stringify(record),
          resolved: false,
        });
      },
    });
    for (const name of [
      'a record of an unknown version',
      'a corrupt record is invalid',
      'lists unresolved suspensions oldest first',
      'saving over a resolved suspension',
    ]) {
      expect(await failure(shared, name), name).toBe('the case passed');
    }
  });

  it('on one shared folder, the process cases keep to their own records after the corrupt-record case', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'x-continuation-shared-'));
    dirs.push(directory);
    const shared = options(() => new FileContinuationStore(directory), {
      processes: {
        module: fixture('file-store.mjs'),
        args: () => ({ directory }),
        rounds: 3,
        kills: 2,
      },
      writeRaw: (_store, id, record) =>
        writeFile(join(directory, `${id}.json`), JSON.stringify(record)),
    });
    for (const name of [
      'a corrupt record is invalid',
      '4 processes race',
      'a saving process SIGKILLed',
    ]) {
      expect(await failure(shared, name), name).toBe('the case passed');
    }
  }, 60_000);

  describe('options are checked when the suite is registered, naming the option', () => {
    const given = options((entries) => new SharedMapStore(entries));
    const suite = '[@x/continuation] describeContinuationStore';
    const processes = { module: fixture('file-store.mjs'), args: () => ({}) };

    it('a complete set passes', () => {
      expect(() => checkOptions(suite, given, OPTION_RULES)).not.toThrow();
      expect(() =>
        checkOptions(suite, { ...given, processes, writeRaw: async () => {} }, OPTION_RULES),
      ).not.toThrow();
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
      ['create', { create: 'store' }, 'option "create" is "store": give a function'],
      ['name', { name: '' }, 'option "name" is "": give a non-empty string'],
      ['destroy', { destroy: 1 }, 'option "destroy" is 1: give a function'],
      ['writeRaw', { writeRaw: {} }, 'option "writeRaw" is an object: give a function'],
      ['raceRounds', { raceRounds: 0 }, 'option "raceRounds" is 0: give an integer of at least 1'],
      [
        'processes.module',
        { processes: { args: () => ({}) } },
        'option "processes.module" is missing',
      ],
      [
        'a relative processes.module',
        { processes: { ...processes, module: './store.mjs' } },
        'option "processes.module" is "./store.mjs": give the absolute path or file: URL',
      ],
      [
        'a missing processes.module',
        { processes: { ...processes, module: fixture('none.mjs') } },
        'option "processes.module" is the URL file:',
      ],
      [
        'processes.args',
        { processes: { module: processes.module } },
        'option "processes.args" is missing',
      ],
      [
        'processes.racers',
        { processes: { ...processes, racers: 1 } },
        'option "processes.racers" is 1: give an integer of at least 2',
      ],
      [
        'processes.kills',
        { processes: { ...processes, kills: -1 } },
        'option "processes.kills" is -1',
      ],
    ])('%s', (_, change, message) => {
      const call = () =>
        describeContinuationStore({
          ...given,
          ...change,
        } as unknown as DescribeContinuationStoreOptions<ContinuationStore>);
      expect(call).toThrow(TypeError);
      expect(call).toThrow(`${suite}: ${message}`);
    });

    it('no options object at all', () => {
      expect(() =>
        describeContinuationStore(
          undefined as unknown as DescribeContinuationStoreOptions<ContinuationStore>,
        ),
      ).toThrow(`${suite}: expected an options object, got undefined`);
    });
  });

  describe('across processes, a file store that writes in place and marks by read-then-write', () => {
    const naive = (extra: { rounds?: number; kills?: number }) =>
      options(() => new SharedMapStore(new Map()), {
        create: async () => {
          const directory = await mkdtemp(join(tmpdir(), 'x-continuation-naive-'));
          dirs.push(directory);
          // The parent reads and writes through the same naive store as the children.
          const module = await import(fixture('naive-file-store.mjs').href);
          return Object.assign(module.default({ directory }) as ContinuationStore, { directory });
        },
        processes: {
          module: fixture('naive-file-store.mjs'),
          args: (store) => ({ directory: (store as unknown as { directory: string }).directory }),
          ...extra,
        },
      });

    it('the process race names exactly-once across processes', async () => {
      const message = await failure(naive({ rounds: 40 }), '4 processes race');
      expect(message).toMatch(/exactly-once across processes|stays resolved/);
    }, 120_000);

    // About one kill in six tears the naive record (fewer on a loaded machine), and the case
    // stops at the first torn record: a generous allowance costs nothing and a miss is negligible.
    it('SIGKILL during save names the torn record', async () => {
      const message = await failure(naive({ kills: 128 }), 'a saving process SIGKILLed');
      expect(message).toMatch(/leaves the old record or the new one, whole|not a mix of two/);
    }, 120_000);
  });
});
