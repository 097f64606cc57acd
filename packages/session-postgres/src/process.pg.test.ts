import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openServerTarget, type SqlTarget, serverForTests } from '@internal/pg-test';
import { Checkpointer, SessionManager } from '@x/session';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, PostgresCheckpointStore } from './index.js';

const child = fileURLToPath(new URL('../test/fixtures/put-child.mjs', import.meta.url));
const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const server = await serverForTests();

interface ChildReport {
  writer: string;
  wins: Array<{ expected: number | null; revision: number; attempt: number }>;
  conflicts: number;
}

/** Starts a writer; it writes once told `go()`, after every writer is `ready`. */
function startWriter(args: string[]) {
  const proc = spawn(process.execPath, [child, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let onReady = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  proc.stdout.on('data', (chunk) => {
    stdout += chunk;
    if (stdout.startsWith('ready\n')) onReady();
  });
  proc.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const report = new Promise<ChildReport>((resolve, reject) => {
    proc.on('close', (code) => {
      if (code === 0) resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as ChildReport);
      else reject(new Error(`writer exited with ${code}: ${stderr}`));
    });
  });
  return {
    ready: Promise.race([ready, report.then(() => {})]),
    go: () => proc.stdin.end('go\n'),
    report,
  };
}

// PGlite is one process's database, so only the server is raced across processes.
describe.skipIf(server === undefined)(
  'PostgresCheckpointStore across processes (built dist)',
  () => {
    let target: SqlTarget;
    beforeAll(async () => {
      if (!existsSync(dist))
        throw new Error('build @x/session-postgres first: the writers import dist/');
      target = await openServerTarget(server ?? '');
      await migrate(target.db);
    });
    afterAll(() => target?.close());

    it('writers quoting the same revision: exactly one wins each revision, no update lost', {
      timeout: 120_000,
    }, async () => {
      const store = new PostgresCheckpointStore(target.db);
      await store.put('race', new Checkpointer().capture([], new SessionManager()));
      const writers = 6;
      const attempts = 20;
      const started = Array.from({ length: writers }, (_, i) =>
        startWriter([target.url ?? '', 'race', `w${i}`, `${attempts}`]),
      );
      // All connected before any starts, so that the writers overlap.
      await Promise.all(started.map((w) => w.ready));
      for (const w of started) w.go();
      const reports = await Promise.all(started.map((w) => w.report));
      const wins = reports.flatMap((r) => r.wins.map((w) => ({ ...w, writer: r.writer })));
      expect(new Set(wins.map((w) => w.expected)).size).toBe(wins.length);
      for (const win of wins) expect(win.revision).toBe((win.expected ?? 0) + 1);
      const stored = await store.get('race');
      expect(stored?.revision).toBe(1 + wins.length);
      const last = wins.find((w) => w.revision === stored?.revision);
      expect(stored?.checkpoint.runtimeState).toMatchObject({
        writer: last?.writer,
        attempt: last?.attempt,
      });
      const conflicts = reports.reduce((n, r) => n + r.conflicts, 0);
      expect(conflicts).toBeGreaterThan(0);
      expect(wins.length + conflicts).toBe(writers * attempts);
    });
  },
);
