import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Checkpointer, SessionManager } from '../index.js';
import { FileCheckpointStore } from './index.js';

const child = fileURLToPath(new URL('../../test/fixtures/put-child.mjs', import.meta.url));
const dist = fileURLToPath(new URL('../../dist/file/index.js', import.meta.url));

interface ChildReport {
  writer: string;
  wins: Array<{ expected: number | null; revision: number; attempt: number }>;
  conflicts: number;
}

function start(args: string[]): {
  proc: ChildProcess;
  ready: Promise<void>;
  output: Promise<string>;
} {
  const proc = spawn(process.execPath, [child, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let onReady = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  proc.stdout?.on('data', (chunk) => {
    stdout += chunk;
    if (stdout.startsWith('ready\n')) onReady();
  });
  proc.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const output = new Promise<string>((resolve, reject) => {
    proc.on('close', (code, signal) => {
      if (code === 0 || signal === 'SIGKILL') resolve(stdout);
      else reject(new Error(`writer exited with ${code}: ${stderr}`));
    });
  });
  return { proc, ready: Promise.race([ready, output.then(() => {})]), output };
}

describe('FileCheckpointStore across processes (built dist)', () => {
  let root: string;
  beforeAll(() => {
    if (!existsSync(dist))
      throw new Error('build @x/session first: the writer processes import dist/');
  });
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'x-session-proc-'));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('writers quoting the same revision: exactly one wins each revision, no update lost', {
    timeout: 120_000,
  }, async () => {
    const store = new FileCheckpointStore({ directory: root });
    const session = new SessionManager();
    await store.put('race', new Checkpointer().capture([], session));
    const writers = Array.from({ length: 6 }, (_, i) => start([root, 'race', `w${i}`, '40']));
    // All loaded before any starts, so that the writers overlap.
    await Promise.all(writers.map((w) => w.ready));
    for (const { proc } of writers) proc.stdin?.end('go\n');
    const reports = (await Promise.all(writers.map((w) => w.output))).map(
      (out) => JSON.parse(out.trim().split('\n').at(-1) ?? '') as ChildReport,
    );

    const wins = reports.flatMap((r) => r.wins.map((w) => ({ ...w, writer: r.writer })));
    const expectedRevisions = wins.map((w) => w.expected);
    expect(new Set(expectedRevisions).size).toBe(wins.length);
    for (const win of wins) expect(win.revision).toBe((win.expected ?? 0) + 1);
    const stored = await store.get('race');
    expect(stored?.revision).toBe(1 + wins.length);
    const last = wins.find((w) => w.revision === stored?.revision);
    expect(stored?.checkpoint.runtimeState).toMatchObject({
      writer: last?.writer,
      attempt: last?.attempt,
    });
    expect(reports.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);
    expect(wins.length + reports.reduce((n, r) => n + r.conflicts, 0)).toBe(6 * 40);
  });

  it('a writer killed at any point leaves a readable latest revision and a writable thread', {
    timeout: 120_000,
  }, async () => {
    const store = new FileCheckpointStore({ directory: root, staleTempMs: -1 });
    for (let round = 0; round < 5; round++) {
      const writer = start([root, 'crash', `k${round}`, '0', 'loop']);
      writer.proc.stdin?.end('go\n');
      await new Promise<void>((resolve, reject) => {
        writer.output.then(() => reject(new Error('writer ended before it was killed')), reject);
        let seen = 0;
        writer.proc.stdout?.on('data', (chunk: Buffer) => {
          seen += chunk.toString().split('wrote').length - 1;
          if (seen >= 3 + round * 5) resolve();
        });
      });
      writer.proc.kill('SIGKILL');
      await writer.output;
      const stored = await store.get('crash');
      expect(stored?.checkpoint.runtimeState.writer).toBe(`k${round}`);
      const next = await store.put('crash', new Checkpointer().capture([], new SessionManager()), {
        expectedRevision: stored?.revision ?? null,
      });
      expect(next).toBe((stored?.revision ?? 0) + 1);
    }
    // The sweeping store removed every temp file a kill may have left behind.
    expect((await readdir(join(root, 'crash'))).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
  });
});
