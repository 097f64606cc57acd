import { link, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContinuationError } from '../errors.js';
import { describeContinuationStore, sampleSuspension } from '../testing/index.js';
import { FileContinuationStore, sessionDir } from './index.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'x-continuation-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

describeContinuationStore({
  name: 'FileContinuationStore',
  create: async () => new FileContinuationStore(join(await tempDir(), 'continuations')),
  destroy: (store) => rm(store.directory, { recursive: true, force: true }),
  peer: (store) => new FileContinuationStore(store.directory),
  // A folder path that runs through a file: every call fails with ENOTDIR.
  failing: async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'file'), '');
    return new FileContinuationStore(join(dir, 'file', 'continuations'));
  },
  processes: {
    module: new URL('../../test/fixtures/file-store.mjs', import.meta.url),
    args: (store) => ({ directory: store.directory }),
    rounds: 150,
  },
  writeRaw: async (store, id, record) => {
    await mkdir(store.directory, { recursive: true });
    await writeFile(join(store.directory, `${id}.json`), JSON.stringify(record));
  },
});

describe('FileContinuationStore on disk', () => {
  let dir: string;
  let store: FileContinuationStore;
  beforeEach(async () => {
    dir = await tempDir();
    store = new FileContinuationStore(dir);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the snake_case JSON of encodeSuspension to <id>.json', async () => {
    const s = sampleSuspension({ sessionId: 'sess-1' });
    await store.save(s);
    const json = JSON.parse(await readFile(join(dir, `${s.interactionId}.json`), 'utf8'));
    expect(json).toMatchObject({
      version: 1,
      session_id: 'sess-1',
      interaction_id: s.interactionId,
      tool_use_id: s.toolUseId,
      tool_name: 'ask_user',
      created_at: '2026-01-02T03:04:05.678Z',
      resolved: false,
    });
  });

  it('markResolved moves the record, byte for byte, to <id>.resolved: no <id>.json is left to load', async () => {
    const s = sampleSuspension({ messages: true });
    await store.save(s);
    const before = await readFile(join(dir, `${s.interactionId}.json`), 'utf8');
    await store.markResolved(s.interactionId);
    expect(await readdir(dir)).toEqual([`${s.interactionId}.resolved`]);
    expect(await readFile(join(dir, `${s.interactionId}.resolved`), 'utf8')).toBe(before);
    await expect(store.load(s.interactionId)).rejects.toMatchObject({ code: 'already_resolved' });
    await expect(store.markResolved(s.interactionId)).rejects.toMatchObject({
      code: 'already_resolved',
    });
  });

  it('a save over a record resolved here is already_resolved and writes no <id>.json', async () => {
    const s = sampleSuspension();
    await store.save(s);
    await store.markResolved(s.interactionId);
    await expect(store.save(s)).rejects.toMatchObject({ code: 'already_resolved' });
    expect(await readdir(dir)).toEqual([`${s.interactionId}.resolved`]);
  });

  it('markResolved reads a record in another layout (indented, as another program may write it) whole', async () => {
    const s = sampleSuspension({ messages: true });
    await store.save(s);
    const path = join(dir, `${s.interactionId}.json`);
    const json = JSON.parse(await readFile(path, 'utf8'));
    await writeFile(path, `${JSON.stringify(json, null, 2)}\n`);
    await store.markResolved(s.interactionId);
    await expect(store.load(s.interactionId)).rejects.toMatchObject({ code: 'already_resolved' });

    const other = sampleSuspension();
    await store.save(other);
    const otherPath = join(dir, `${other.interactionId}.json`);
    const resolved = { ...JSON.parse(await readFile(otherPath, 'utf8')), resolved: true };
    await writeFile(otherPath, JSON.stringify(resolved, null, 2));
    await expect(store.markResolved(other.interactionId)).rejects.toMatchObject({
      code: 'already_resolved',
    });
    await writeFile(otherPath, JSON.stringify({ ...resolved, resolved: 'yes' }, null, 2));
    await expect(store.markResolved(other.interactionId)).rejects.toMatchObject({
      code: 'invalid',
      field: 'resolved',
    });
  });

  it('a record marked resolved by another writer (resolved: true, no marker) is resolved', async () => {
    const s = sampleSuspension();
    await store.save(s);
    const path = join(dir, `${s.interactionId}.json`);
    const json = JSON.parse(await readFile(path, 'utf8'));
    await writeFile(path, JSON.stringify({ ...json, resolved: true }));
    await expect(store.load(s.interactionId)).rejects.toMatchObject({ code: 'already_resolved' });
    await expect(store.markResolved(s.interactionId)).rejects.toMatchObject({
      code: 'already_resolved',
    });
    await expect(store.save(s)).rejects.toMatchObject({ code: 'already_resolved' });
    expect(await store.listUnresolved()).toEqual([]);
  });

  it('a crash between the marker link and the record removal leaves it resolved, not loadable', async () => {
    const s = sampleSuspension();
    await store.save(s);
    // What markResolved leaves if killed right after link(): the record and its marker.
    const record = await readFile(join(dir, `${s.interactionId}.json`), 'utf8');
    await link(join(dir, `${s.interactionId}.json`), join(dir, `${s.interactionId}.resolved`));
    await expect(store.load(s.interactionId)).rejects.toMatchObject({ code: 'already_resolved' });
    await expect(store.markResolved(s.interactionId)).rejects.toMatchObject({
      code: 'already_resolved',
    });
    await expect(store.save(s)).rejects.toMatchObject({ code: 'already_resolved' });
    expect(await store.listUnresolved()).toEqual([]);
    // ...and the record itself is still there, whole.
    expect(await readFile(join(dir, `${s.interactionId}.json`), 'utf8')).toBe(record);
  });

  it('stray temp files (from a crash) are ignored by load and listUnresolved', async () => {
    const s = sampleSuspension();
    await store.save(s);
    await writeFile(join(dir, `.${s.interactionId}.json.abc123.tmp`), '{"version":1,"trunc');
    await writeFile(join(dir, '.other.json.ffff.tmp'), '');
    expect(await store.load(s.interactionId)).toEqual(s);
    expect(await store.listUnresolved()).toEqual([s]);
  });

  it('a truncated record is invalid, not a crash or a silent skip', async () => {
    const s = sampleSuspension();
    await store.save(s);
    const path = join(dir, `${s.interactionId}.json`);
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.slice(0, text.length / 2));
    const err = await store.load(s.interactionId).catch((e: unknown) => e);
    expect(ContinuationError.is(err) && err.code).toBe('invalid');
  });

  it('a record stored under another file name than its interaction_id is invalid', async () => {
    const s = sampleSuspension();
    await store.save(s);
    await writeFile(
      join(dir, 'renamed.json'),
      await readFile(join(dir, `${s.interactionId}.json`)),
    );
    await expect(store.load('renamed')).rejects.toMatchObject({
      code: 'invalid',
      field: 'interaction_id',
    });
  });

  it('refuses to save or load a record over maxRecordBytes', async () => {
    const small = new FileContinuationStore(dir, { maxRecordBytes: 500 });
    const big = sampleSuspension({ messages: true });
    await expect(small.save(big)).rejects.toMatchObject({ code: 'invalid' });
    await store.save(big);
    await expect(small.load(big.interactionId)).rejects.toMatchObject({ code: 'invalid' });
    expect(await store.load(big.interactionId)).toEqual(big);
  });

  it('a missing folder lists nothing and loads not_found', async () => {
    const absent = new FileContinuationStore(join(dir, 'nope'));
    expect(await absent.listUnresolved()).toEqual([]);
    await expect(absent.load('x')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a folder that cannot be created is unavailable, with the cause kept', async () => {
    await writeFile(join(dir, 'file'), '');
    const blocked = new FileContinuationStore(join(dir, 'file', 'sub'));
    const err = await blocked.save(sampleSuspension()).catch((e: unknown) => e);
    expect(ContinuationError.is(err) && err.code).toBe('unavailable');
    expect((err as Error).cause).toBeDefined();
  });
});

describe('sessionDir', () => {
  it('is <root>/<sessionId>/continuations', () => {
    expect(sessionDir('/data', 'sess-1')).toBe(join('/data', 'sess-1', 'continuations'));
  });

  it.each(['..', '../x', 'a/b', 'a\\b', 'a\u0000b', '', 'x'.repeat(201)])(
    'refuses the unsafe session id %j',
    (id) => {
      expect(() => sessionDir('/data', id)).toThrow(expect.objectContaining({ code: 'unsafe_id' }));
    },
  );
});
