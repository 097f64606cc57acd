import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ContinuationError } from '../errors.js';
import { sampleSuspension } from '../testing/index.js';
import { FileContinuationStore } from './index.js';

// Linux fails link(2) with ENOENT when a concurrent rename replaced its source between the
// lookup and the link; the kernel window is too narrow to hit on purpose, so `link` fails
// the way the kernel does, as many times as the test says.
const race = vi.hoisted(() => ({ failures: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...fs,
    link: async (...args: Parameters<typeof fs.link>) => {
      if (race.failures > 0) {
        race.failures--;
        throw Object.assign(new Error('ENOENT: no such file or directory, link'), {
          code: 'ENOENT',
        });
      }
      return fs.link(...args);
    },
  };
});

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function store(): Promise<FileContinuationStore> {
  const dir = await mkdtemp(join(tmpdir(), 'x-continuation-race-'));
  dirs.push(dir);
  return new FileContinuationStore(dir);
}

describe('FileContinuationStore.markResolved racing a save', () => {
  it('links the record that a racing save renamed over the one it was linking, and wins', async () => {
    const files = await store();
    const s = sampleSuspension();
    await files.save(s);
    race.failures = 2;
    await files.markResolved(s.interactionId);
    const loaded = await files.load(s.interactionId).catch((e: unknown) => e);
    expect(ContinuationError.hasCode(loaded, 'already_resolved')).toBe(true);
  });

  it('still says not_found when the record is really gone', async () => {
    const files = await store();
    race.failures = 1;
    const missing = await files.markResolved('never-saved').catch((e: unknown) => e);
    expect(ContinuationError.hasCode(missing, 'not_found')).toBe(true);
    race.failures = 0;
  });
});
