import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStorage } from 'runner/dist/storage/index.js';
import { knob } from '../knobs.js';
import { type RunnerProcess, sleep, startRunner } from '../proc.js';
import type { Tally } from '../report.js';
import { MODEL } from '../runner.js';
import { client, createDatabase } from '../server.js';

const ROUNDS = knob('RELIABILITY_FIRST_USE_ROUNDS', 20, 1);
const BARRIER = fileURLToPath(new URL('../children/barrier.js', import.meta.url));
const require = createRequire(import.meta.url);

/** One command of a round: its command line and the exit code it must give. */
interface Command {
  args: string[];
  expected: number;
}

/** One process of a round and what it gave. */
interface Outcome extends Command {
  pid: number | undefined;
  code: number | null;
  stdout: string;
  stderr: string;
}

// `serve` runs until stopped: it is stopped (SIGINT) once it prints the URL it listens on.
const serves = (args: string[]) => args[0] === 'serve';
const LISTENING = 'http://127.0.0.1:';

/**
 * Sixteen commands of every kind that opens storage: six `exec`, three `migrate`, three
 * `wake --once`, two `answer` of a token that does not exist (exit 3, after migrating), a
 * `paused-states list` and a `serve`.
 */
function commands(round: number, extra: string[]): Command[] {
  const list: Command[] = [];
  for (let i = 0; i < 6; i++) {
    const conversation = `first-use-${round}-${i}`;
    list.push({
      args: ['exec', 'Plan a trip', '--model', MODEL, '--conversation', conversation],
      expected: 0,
    });
  }
  for (let i = 0; i < 3; i++) list.push({ args: ['migrate'], expected: 0 });
  for (let i = 0; i < 3; i++) list.push({ args: ['wake', '--once'], expected: 0 });
  for (let i = 0; i < 2; i++)
    list.push({ args: ['answer', 'no-such-token', '--accept', 'x'], expected: 3 });
  list.push({ args: ['paused-states', 'list'], expected: 0 });
  list.push({ args: ['serve', '--port', '0'], expected: 0 });
  return list.map(({ args, expected }) => ({ args: [...args, ...extra], expected }));
}

/**
 * Starts every command as a runner process held at one barrier (children/barrier.ts) once
 * its modules are loaded, releases them together, and waits for them all.
 */
async function atOneBarrier(list: Command[], env: NodeJS.ProcessEnv): Promise<Outcome[]> {
  const dir = mkdtempSync(join(tmpdir(), 'x-rel-barrier-'));
  try {
    const procs: RunnerProcess[] = list.map(({ args }) =>
      startRunner(args, { ...env, RELIABILITY_BARRIER: dir }, ['--import', BARRIER]),
    );
    const deadline = Date.now() + 120_000;
    while (readdirSync(dir).filter((name) => name.startsWith('ready-')).length < procs.length) {
      if (procs.some((p) => p.child.exitCode !== null) || Date.now() > deadline) break;
      await sleep(10);
    }
    writeFileSync(join(dir, 'go'), '');
    const codes = await Promise.all(
      procs.map(async (p, i) => {
        if (serves(list[i]!.args)) {
          while (!p.stdout.includes(LISTENING) && p.child.exitCode === null) await sleep(50);
          p.child.kill('SIGINT');
        }
        return p.done;
      }),
    );
    return list.map(({ args, expected }, i) => ({
      args,
      expected,
      pid: procs[i]!.child.pid,
      code: codes[i] ?? null,
      stdout: procs[i]!.stdout,
      stderr: procs[i]!.stderr,
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const shown = (o: Outcome) =>
  `runner ${o.args.join(' ')} exited ${o.code}: ${o.stderr.trim().split('\n').slice(0, 3).join(' | ')}`;

/** The process did what its command does: the exit code, no stack, `serve` listened. */
const worked = (o: Outcome) =>
  o.code === o.expected &&
  !/SQLSTATE|\n\s+at /.test(o.stderr) &&
  (!serves(o.args) || o.stdout.includes(LISTENING));

/** The number of migrations in a package's drizzle journal. */
function migrationsOf(pkg: string): number {
  const folder = join(dirname(require.resolve(`${pkg}/package.json`)), 'drizzle');
  const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as {
    entries: unknown[];
  };
  return journal.entries.length;
}

/**
 * Sixteen runner processes of every kind start at one barrier on a fresh PostgreSQL
 * database: every one succeeds, each migration is applied once, every `exec` is waiting.
 */
export async function firstUsePostgres(tally: Tally): Promise<void> {
  const packages = [
    ['@x/askuser', 'x_askuser'],
    ['@x/continuation-postgres', 'x_continuation'],
    ['@x/session-postgres', 'x_session'],
  ] as const;
  for (let round = 0; round < ROUNDS; round++) {
    const database = await createDatabase();
    const sql = client(database.url, 1);
    try {
      const outcomes = await atOneBarrier(commands(round, []), { DATABASE_URL: database.url });
      tally.faults++;
      for (const o of outcomes) {
        tally.cases++;
        tally.check(worked(o), () => shown(o));
      }
      for (const [pkg, schema] of packages) {
        const [row] = await sql.unsafe(
          `select count(*)::int as n, count(distinct created_at)::int as distinct from ${schema}.__migrations`,
        );
        const want = migrationsOf(pkg);
        if (row?.n !== want || row?.distinct !== want) {
          tally.duplicate(
            `round ${round}: ${schema}.__migrations has ${row?.n} rows, ${row?.distinct} distinct, want ${want}`,
          );
        }
      }
      const [waiting] =
        await sql`select count(*)::int as n from x_continuation.runs where status = 'waiting'`;
      if (waiting?.n !== 6) tally.loss(`round ${round}: ${waiting?.n} runs waiting, want 6`);
    } finally {
      await sql.end({ timeout: 5 });
      await database.drop();
    }
  }
}

// A command that only reads a store may start before any other made the folder: refused so.
const MISSING = /^error: the data folder .* does not exist/;
const CREATES = new Set(['exec', 'migrate', 'serve', 'chat']);

// The refusal of a process that finds the data folder locked names the holder.
const IN_USE =
  /^error: the data folder .* is in use by `runner ([\w-]+)` \(pid (\d+), since [^)]+\)/;

/**
 * Sixteen runner processes start at one barrier on a fresh data folder (the embedded
 * default): whoever holds its lock works; every other one is refused with the error that
 * names a holder among them (one line, no stack), or, for a command that only reads a store
 * and started before any other made the folder, with the error that it does not exist; a
 * command sent through `serve` as it stops says so first, and may end with the connection
 * broken; afterwards the folder opens and holds exactly the questions of the `exec`s that
 * ran (and at most those of the execs cut).
 */
export async function firstUseEmbedded(tally: Tally): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    const scratch = mkdtempSync(join(tmpdir(), 'x-rel-first-use-'));
    const data = join(scratch, 'data');
    try {
      const outcomes = await atOneBarrier(commands(round, ['--data', data]), {});
      tally.faults++;
      const pids = new Map(outcomes.map((o) => [String(o.pid), o.args[0]]));
      const servePid = String(outcomes.find((o) => serves(o.args))?.pid);
      let succeeded = 0;
      let execs = 0;
      // Execs sent through serve whose connection broke as serve stopped: what they did stands.
      let cut = 0;
      for (const o of outcomes) {
        tally.cases++;
        if (worked(o)) {
          succeeded++;
          if (o.args[0] === 'exec') execs++;
          continue;
        }
        // A command that found serve holding the folder says so on a line of its own first.
        const lines = o.stderr.trim().split('\n');
        const routed = lines.length === 2 && lines[0] === `via serve (pid ${servePid})`;
        const error = routed ? (lines[1] ?? '') : o.stderr;
        const refused = IN_USE.exec(error);
        const holder = refused && pids.get(refused[2]!);
        const early = MISSING.test(error) && !CREATES.has(o.args[0] ?? '');
        const broke =
          routed && error.startsWith(`error: the connection to serve (pid ${servePid}) broke`);
        if (broke && o.args[0] === 'exec') cut++;
        tally.check(
          o.code === 4 &&
            (early || broke || holder === refused?.[1]) &&
            (routed || lines.length === 1),
          () => `round ${round}: ${shown(o)}`,
        );
      }
      tally.check(succeeded > 0, () => `round ${round}: no process got the data folder`);
      tally.check(
        !existsSync(join(data, 'runner.lock')),
        () => `round ${round}: the lock file was left behind`,
      );
      const storage = await openStorage({ dataDir: data, command: 'reliability', log: () => {} });
      try {
        const pending = await storage.pauses().listPendingAll();
        if (pending.length < execs || pending.length > execs + cut) {
          tally.loss(
            `round ${round}: ${pending.length} questions pending after ${execs} exec (and ${cut} cut as serve stopped)`,
          );
        }
      } finally {
        await storage.close();
      }
    } catch (error) {
      tally.fail(
        `round ${round}: the data folder cannot be used afterwards: ${(error as Error).message}`,
      );
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}
