import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { knob, quick } from '../knobs.js';
import { type CliEvent, type RunnerProcess, runRunner, sleep, startRunner } from '../proc.js';
import type { Tally } from '../report.js';
import { TRIP_ANSWERS } from '../runner.js';
import { createDatabase } from '../server.js';

/** Rounds of every case, per storage kind. */
const ROUNDS = knob('RELIABILITY_STOP_ROUNDS', 1, 1);
/** The resumed model call that the SIGTERM lands in, finished within the default grace. */
const SLOW = { RUNNER_SCRIPTED_DELAY_MS: '5000' };
/**
 * The call that a cut or a second signal ends: long enough that starting the waiting wake
 * on a loaded machine cannot outlast it (it never runs to its end).
 */
const CUT = { RUNNER_SCRIPTED_DELAY_MS: '30000' };
/** The lease of a wake stopped at once: its run is claimable again this long after. */
const SHORT_LEASE_MS = 1_500;

/**
 * How a wake is stopped in the middle of its 5 s model call: SIGTERM with the default grace
 * (the turn finishes first); SIGTERM with `--grace 1s` (the turn is cut, its lease released,
 * and the next worker takes the run at once); SIGTERM twice (it stops at once, and the next
 * worker takes the run when its lease expires).
 */
export const STOP_CASES = ['within the grace', 'grace cut', 'second signal'] as const;
type StopCase = (typeof STOP_CASES)[number];

interface Kind {
  name: 'embedded' | 'postgres';
  base: string[];
  env: NodeJS.ProcessEnv;
}

type Cli = (args: string[], env?: NodeJS.ProcessEnv) => Promise<CliEvent[]>;

/** A `wake --json` process and every event it printed so far. */
interface Wake {
  proc: RunnerProcess;
  events: CliEvent[];
  /** The first event that `match`es, waiting up to `timeoutMs` for it. */
  until(match: (event: CliEvent) => boolean, timeoutMs?: number): Promise<CliEvent | undefined>;
}

function startWake(kind: Kind, args: string[], env: NodeJS.ProcessEnv): Wake {
  const proc = startRunner(['wake', '--json', ...kind.base, ...args], { ...kind.env, ...env });
  const events: CliEvent[] = [];
  proc.onEvent((event) => events.push({ ...event, receivedAt: Date.now() }));
  return {
    proc,
    events,
    async until(match, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find(match);
        if (found || Date.now() > deadline || proc.child.exitCode !== null) return found;
        await sleep(25);
      }
    },
  };
}

const of = (events: CliEvent[], type: string, token?: string) =>
  events.filter((e) => e.type === type && (token === undefined || e.token === token));

/** A transcript with its ids left out: two runs of the same answers read the same. */
function shape(messages: unknown): string {
  return JSON.stringify(messages, (key, value) =>
    key === 'id' || key === 'tool_use_id' ? undefined : value,
  );
}

/** Starts a conversation and answers its first question: a run ready to resume. */
async function readyRun(cli: Cli, id: string): Promise<string> {
  const exec = await cli(['exec', 'Plan a trip', '--conversation', id]);
  const token = String(of(exec, 'run-waiting')[0]?.token ?? '');
  await cli(['answer', token, '--accept', TRIP_ANSWERS[0] as string]);
  return token;
}

/** The conversation as `runner show` tells it: its questions, and its transcript's shape. */
async function shown(cli: Cli, id: string): Promise<{ asked: number; transcript: string }> {
  const [run] = of(await cli(['show', id]), 'run') as Array<{
    questions?: unknown[];
    messages?: unknown[];
  }>;
  return { asked: run?.questions?.length ?? 0, transcript: shape(run?.messages ?? []) };
}

/** One conversation stopped by `how` mid-call, taken over, and checked. */
async function round(
  tally: Tally,
  kind: Kind,
  cli: Cli,
  how: StopCase,
  id: string,
  clean: { transcript: string },
) {
  const token = await readyRun(cli, id);
  const all: CliEvent[] = [];
  const stopped = startWake(kind, how === 'grace cut' ? ['--grace', '1s'] : [], {
    ...(how === 'within the grace' ? SLOW : CUT),
    ...(how === 'second signal' ? { RUNNER_LEASE_MS: String(SHORT_LEASE_MS) } : {}),
  });
  // On PostgreSQL the next worker already waits, woken by nothing but the release: its poll
  // is off and the run's lease (60 s) has not expired.
  let next: Wake | undefined;
  try {
    if (!(await stopped.until((e) => e.type === 'model-call'))) {
      return tally.fail(`${id}: the wake never called the model: ${stopped.proc.stderr}`);
    }
    if (kind.name === 'postgres' && how === 'grace cut') {
      next = startWake(kind, [], { RUNNER_WAKE_POLL_MS: '600000' });
      await next.until((e) => e.type === 'ready');
    }
    await sleep(next ? 1_000 : 0);
    stopped.proc.child.kill('SIGTERM');
    tally.faults++;
    if (how === 'second signal') {
      await stopped.until((e) => e.type === 'stop-requested');
      stopped.proc.child.kill('SIGTERM');
    }
    const code = await stopped.proc.done;
    all.push(...stopped.events);
    const want = how === 'second signal' ? 143 : 0;
    tally.check(code === want, () => `${id} (${how}): exit ${code}, want ${want}`);
    const resumedHere = of(stopped.events, 'resumed', token).length;
    const released = of(stopped.events, 'run-released', token).length;
    if (how === 'within the grace') {
      tally.check(
        resumedHere === 1 && released === 0,
        () => `${id}: resumed ${resumedHere}, released ${released} within the grace`,
      );
      // The signal came during the turn, which then finished: the stop was said first.
      const types = stopped.events.map((e) => e.type);
      tally.check(
        types.includes('stop-requested') &&
          types.indexOf('stop-requested') < types.indexOf('resumed'),
        () => `${id}: stop-requested was not said before the turn ended: ${types.join(', ')}`,
      );
    } else {
      tally.check(
        resumedHere === 0 && released === (how === 'grace cut' ? 1 : 0),
        () => `${id} (${how}): resumed ${resumedHere}, released ${released} by the stopped wake`,
      );
      // The next worker: already waiting (PostgreSQL), or the next process (embedded, and after
      // a forced stop once the lease has expired).
      let taken: CliEvent[];
      if (next) {
        await next.until((e) => e.type === 'resumed' && e.token === token, 30_000);
        taken = next.events;
      } else {
        taken = [];
        for (let pass = 0; pass < 20 && of(taken, 'resumed', token).length === 0; pass++) {
          if (pass > 0) await sleep(300);
          taken.push(...(await cli(['wake', '--once'])));
        }
      }
      all.push(...taken);
      const claimed = of(taken, 'run-claimed', token)[0];
      if (!claimed) tally.loss(`${id} (${how}): no other worker took the run over`);
      const releasedAt = of(stopped.events, 'run-released', token)[0]?.receivedAt;
      if (next && claimed && typeof releasedAt === 'number') {
        takeovers.push(Number(claimed.receivedAt) - releasedAt);
      }
      // A release gives the claim back; a worker stopped at once counts as an attempt.
      const attempt = how === 'grace cut' ? 1 : 2;
      tally.check(
        claimed === undefined || claimed.attempt === attempt,
        () => `${id} (${how}): taken over as attempt ${claimed?.attempt}, want ${attempt}`,
      );
    }
  } finally {
    stopped.proc.child.kill('SIGKILL');
    if (next) {
      next.proc.child.kill('SIGTERM');
      await next.proc.done;
    }
  }
  const resumed = of(all, 'resumed', token).length;
  if (resumed === 0) return tally.loss(`${id} (${how}): the answer was never resumed`);
  if (resumed > 1) tally.duplicate(`${id} (${how}): the answer was resumed ${resumed} times`);
  // Nothing of the stopped attempt was committed beside the attempt that took over: one new
  // question, and the transcript of a run nobody stopped.
  const { asked, transcript } = await shown(cli, id);
  if (asked > 2) tally.duplicate(`${id} (${how}): ${asked} questions asked, want 2`);
  tally.check(
    transcript === clean.transcript,
    () =>
      `${id} (${how}): its transcript is not a clean run's:\n${transcript}\n${clean.transcript}`,
  );
  tally.cases++;
}

/** Milliseconds from a release to the waiting wake's claim of that run (PostgreSQL). */
const takeovers: number[] = [];

async function rounds(tally: Tally, kind: Kind, cases: readonly StopCase[]) {
  takeovers.length = 0;
  const cli: Cli = async (args, extra = {}) => {
    const run = await runRunner([...args, '--json', ...kind.base], { ...kind.env, ...extra });
    if (run.code !== 0)
      throw new Error(`runner ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
    return run.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as CliEvent);
  };
  // The same conversation with nobody stopped, to compare against.
  await readyRun(cli, 'clean');
  await cli(['wake', '--once']);
  const clean = await shown(cli, 'clean');
  for (let r = 0; r < ROUNDS; r++) {
    for (const how of cases) {
      await round(tally, kind, cli, how, `stop-${r}-${how.replaceAll(' ', '-')}`, clean);
    }
  }
  tally.note(
    `${kind.name}: ${cases.join(', ')} × ${ROUNDS}; each answer resumed once, each transcript a clean run's` +
      (takeovers.length
        ? `; a released run was claimed by the waiting wake ${takeovers.join(', ')} ms after the release`
        : ''),
  );
}

/** SIGTERM during a 5 s model call of `wake`, on the embedded default (one process at a time). */
export async function stopEmbedded(tally: Tally): Promise<void> {
  // Each command starts PGlite (seconds); apps/runner/test/graceful-stop.slow.test.ts has serve's cut.
  if (quick) return tally.skip('full run only (pnpm test:reliability): each command starts PGlite');
  const data = mkdtempSync(join(tmpdir(), 'x-rel-stop-'));
  try {
    await rounds(tally, { name: 'embedded', base: ['--data', data], env: {} }, STOP_CASES);
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

/** SIGTERM during a 5 s model call of `wake`, on PostgreSQL with a second wake waiting. */
export async function stopPostgres(tally: Tally): Promise<void> {
  const database = await createDatabase();
  try {
    await rounds(tally, { name: 'postgres', base: [], env: { DATABASE_URL: database.url } }, [
      ...(quick ? (['grace cut', 'second signal'] as const) : STOP_CASES),
    ]);
  } finally {
    await database.drop();
  }
}
