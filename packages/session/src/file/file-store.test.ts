import { link, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SessionError } from '../index.js';
import { describeCheckpointStore, sampleCheckpoint } from '../testing/index.js';
import { FileCheckpointStore } from './index.js';

const dirs = new Map<FileCheckpointStore, string>();
afterAll(() =>
  Promise.all([...dirs.values()].map((dir) => rm(dir, { recursive: true, force: true }))),
);

describeCheckpointStore({
  name: 'FileCheckpointStore',
  async create() {
    const directory = await mkdtemp(join(tmpdir(), 'x-session-file-'));
    const store = new FileCheckpointStore(join(directory, 'sessions'));
    dirs.set(store, directory);
    return store;
  },
  // Another instance on the same folder, as another process would have.
  peer: (store) => new FileCheckpointStore(store.directory),
  async destroy(store) {
    await rm(dirs.get(store) ?? '', { recursive: true, force: true });
  },
  // A folder path that runs through a file: every call fails with ENOTDIR.
  async failing() {
    const directory = await mkdtemp(join(tmpdir(), 'x-session-file-'));
    await writeFile(join(directory, 'file'), '');
    const store = new FileCheckpointStore(join(directory, 'file', 'sessions'));
    dirs.set(store, directory);
    return store;
  },
  processes: {
    module: new URL('../../test/fixtures/file-store.mjs', import.meta.url),
    args: (store) => ({ directory: store.directory }),
  },
});

describe('FileCheckpointStore files', () => {
  let root: string;
  let store: FileCheckpointStore;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'x-session-file-'));
    store = new FileCheckpointStore(root);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('keeps data only in the latest revision file; older names stay, emptied; no temp file', async () => {
    let revision = await store.put('t', sampleCheckpoint(1));
    for (let i = 2; i < 6; i++) {
      revision = await store.put('t', sampleCheckpoint(i), { expectedRevision: revision });
    }
    const names = (await readdir(join(root, 't'))).sort();
    expect(names).toEqual(['1.json', '2.json', '3.json', '4.json', '5.json']);
    for (const name of names) {
      const size = (await stat(join(root, 't', name))).size;
      if (name === `${revision}.json`) expect(size).toBeGreaterThan(0);
      else expect(size).toBe(0);
    }
  });

  it('a revision name once used is never reusable: linking over it fails', async () => {
    const first = await store.put('t', sampleCheckpoint(1));
    await store.put('t', sampleCheckpoint(2), { expectedRevision: first });
    await expect(link(join(root, 't', '2.json'), join(root, 't', '1.json'))).rejects.toMatchObject({
      code: 'EEXIST',
    });
  });

  it('ignores temp files left by a crash before the link, and sweeps them once stale', async () => {
    const revision = await store.put('t', sampleCheckpoint(1));
    await writeFile(join(root, 't', '.2.json.deadbeef0000.tmp'), '{"half":');
    // The name an older version gave its temp files.
    await writeFile(join(root, 't', '.tmp-1-deadbeef'), '{"half":');
    expect((await store.get('t'))?.checkpoint).toEqual(sampleCheckpoint(1));
    const sweeping = new FileCheckpointStore(root, { staleTempMs: -1 });
    await sweeping.put('t', sampleCheckpoint(2), { expectedRevision: revision });
    expect((await readdir(join(root, 't'))).sort()).toEqual([
      `${revision}.json`,
      `${revision + 1}.json`,
    ]);
  });

  it('reads the highest revision when a crash left older ones behind', async () => {
    await store.put('t', sampleCheckpoint(1));
    const older = `{"format":"x-session-file","version":1,"threadId":"t","revision":1,"checkpoint":${JSON.stringify(sampleCheckpoint(9))}}`;
    await writeFile(join(root, 't', '0.json'), older); // not a revision name: ignored
    expect((await store.get('t'))?.checkpoint).toEqual(sampleCheckpoint(1));
  });

  it('refuses a revision file that belongs to another revision or thread (copied by hand)', async () => {
    await store.put('t', sampleCheckpoint(1));
    const foreign = `{"format":"x-session-file","version":1,"threadId":"other","revision":9,"checkpoint":${JSON.stringify(sampleCheckpoint(2))}}`;
    await writeFile(join(root, 't', '9.json'), foreign);
    await expect(store.get('t')).rejects.toMatchObject({ code: 'invalid' });
  });

  it('a conflicting update of a missing thread creates no folder', async () => {
    await expect(
      store.put('ghost', sampleCheckpoint(1), { expectedRevision: 3 }),
    ).rejects.toMatchObject({
      code: 'conflict',
    });
    expect(await readdir(root)).toEqual([]);
  });

  it('refuses a record file of a newer format version', async () => {
    await store.put('t', sampleCheckpoint(1));
    await writeFile(
      join(root, 't', '7.json'),
      '{"format":"x-session-file","version":2,"revision":7,"checkpoint":{}}',
    );
    let error: unknown;
    try {
      await store.get('t');
    } catch (caught) {
      error = caught;
    }
    expect(SessionError.hasCode(error, 'unsupported_version')).toBe(true);
  });

  it('refuses a stored checkpoint of a newer version on read', async () => {
    await store.put('t', sampleCheckpoint(1));
    const newer = { ...sampleCheckpoint(1), version: 2 };
    await writeFile(
      join(root, 't', '5.json'),
      `{"format":"x-session-file","version":1,"threadId":"t","revision":5,"checkpoint":${JSON.stringify(newer)}}`,
    );
    await expect(store.get('t')).rejects.toMatchObject({ code: 'unsupported_version' });
  });

  it('a write into a folder that cannot be created is unavailable, with the cause kept', async () => {
    await writeFile(join(root, 'file'), 'x');
    const broken = new FileCheckpointStore(join(root, 'file'));
    const error = await broken.put('t', sampleCheckpoint(1)).catch((e: unknown) => e);
    expect(SessionError.hasCode(error, 'unavailable')).toBe(true);
    expect((error as SessionError).cause).toBeDefined();
  });
});
