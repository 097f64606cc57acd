import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { knob, quick } from '../knobs.js';
import { type CliEvent, runRunner, sleep, startRunner } from '../proc.js';
import type { Tally } from '../report.js';
import { createDatabase } from '../server.js';

/** Rounds of every kill point, per storage kind (the quick run: one round of one point). */
const ROUNDS = knob('RELIABILITY_DELEGATE_ROUNDS', 2, 1);
/** The lease of a killed wake: its run is claimable again this long after it died. */
const LEASE_MS = 1_500;
/** The answers of the team scenario's two worker questions. */
const ANSWERS = { w1: 'under 100 EUR', w2: 'evening' } as const;

/**
 * Where the wake is SIGKILLed: with no answer yet (a worker waits); after one of two answers
 * was resumed; while the answered worker's model call runs; between two answered workers
 * run one at a time (the first finished and recorded, the second's answer recorded, its
 * model call under way); while the parent's runs (both workers finished and recorded).
 */
export const KILL_POINTS = [
  'worker waits',
  'after one answer',
  'worker resumes',
  'between workers',
  'parent resumes',
] as const;
type KillPoint = (typeof KILL_POINTS)[number];

type Cli = (args: string[], env?: NodeJS.ProcessEnv) => Promise<CliEvent[]>;
/** Starts `wake`, SIGKILLs it once `when` holds for an event (or after a moment), returns its events. */
type KillWake = (
  env: NodeJS.ProcessEnv,
  when: ((event: CliEvent, seen: CliEvent[]) => boolean) | undefined,
) => Promise<CliEvent[]>;

function events(stdout: string): CliEvent[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as CliEvent);
}

async function killWake(
  base: string[],
  env: NodeJS.ProcessEnv,
  when: ((event: CliEvent, seen: CliEvent[]) => boolean) | undefined,
): Promise<CliEvent[]> {
  const proc = startRunner(['wake', '--json', ...base], {
    RUNNER_LEASE_MS: String(LEASE_MS),
    RUNNER_WAKE_POLL_MS: '100',
    ...env,
  });
  const seen: CliEvent[] = [];
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, when ? 60_000 : 1_500);
    proc.onEvent((event) => {
      seen.push(event);
      if (when?.(event, seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void proc.done.then(() => resolve());
  });
  proc.child.kill('SIGKILL');
  await proc.done;
  return seen;
}

/** One conversation of the team scenario killed at `point`, recovered, and checked. */
async function round(tally: Tally, cli: Cli, kill: KillWake, point: KillPoint, id: string) {
  const exec = await cli(['exec', 'Plan a Lisbon trip', '--conversation', id]);
  const waiting = exec.find((e) => e.type === 'run-waiting');
  const questions = (waiting?.questions ?? []) as Array<{ worker: 'w1' | 'w2'; token: string }>;
  if (!tally.check(questions.length === 2, () => `${id}: exec asked ${questions.length} questions`))
    return;
  const token = (worker: 'w1' | 'w2') => questions.find((q) => q.worker === worker)?.token ?? '';
  const answer = (worker: 'w1' | 'w2') =>
    cli(['answer', token(worker), '--accept', ANSWERS[worker]]);
  const all: CliEvent[] = [];
  const slow = { RUNNER_SCRIPTED_DELAY_MS: '1500' };
  const calls = (seen: CliEvent[]) => seen.filter((e) => e.type === 'model-call').length;

  if (point === 'worker waits') {
    all.push(...(await kill({}, undefined)));
    await answer('w2');
    await answer('w1');
  } else if (point === 'after one answer') {
    await answer('w2');
    all.push(...(await kill({}, (e) => e.type === 'run-waiting')));
    await answer('w1');
  } else if (point === 'worker resumes') {
    await answer('w2');
    all.push(...(await kill(slow, (e) => e.type === 'model-call')));
    await answer('w1');
  } else if (point === 'between workers') {
    await answer('w2');
    await answer('w1');
    const oneAtATime = { ...slow, RUNNER_WORKER_CONCURRENCY: '1' };
    all.push(...(await kill(oneAtATime, (_, seen) => calls(seen) === 2)));
  } else {
    await answer('w2');
    await answer('w1');
    // Two worker calls, then the parent's: killed during the third.
    all.push(...(await kill(slow, (_, seen) => calls(seen) === 3)));
  }
  tally.faults++;
  await sleep(LEASE_MS + 200);
  // Recovery: wake until the conversation completes (a wait may be needed for the lease).
  const recovery: CliEvent[] = [];
  for (let pass = 0; pass < 10 && !recovery.some((e) => e.type === 'run-completed'); pass++) {
    recovery.push(...(await cli(['wake', '--once'], { RUNNER_LEASE_MS: String(LEASE_MS) })));
    if (!recovery.some((e) => e.type === 'run-completed')) await sleep(300);
  }
  all.push(...recovery);
  await check(tally, cli, id, point, all, calls(recovery));
  tally.cases++;
}

async function check(
  tally: Tally,
  cli: Cli,
  id: string,
  point: KillPoint,
  all: CliEvent[],
  recoveryCalls: number,
) {
  const completed = all.filter((e) => e.type === 'run-completed');
  if (completed.length === 0) return tally.loss(`${id} (${point}): never completed`);
  if (completed.length > 1)
    tally.duplicate(`${id} (${point}): completed ${completed.length} times`);
  const messages = (completed[0]?.messages ?? []) as Array<{
    content: Array<Record<string, unknown>>;
  }>;
  const results = messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_result'));
  const report =
    results.map((r) => JSON.stringify(r.content)).find((t) => t.includes('w1 (')) ?? '';
  for (const part of ['w1 (', 'w2 (', 'w3 (', ANSWERS.w1, ANSWERS.w2]) {
    const n = report.split(part).length - 1;
    if (n === 0) tally.loss(`${id} (${point}): the parent's result lacks "${part}": ${report}`);
    if (n > 1) tally.duplicate(`${id} (${point}): "${part}" ${n} times in ${report}`);
  }
  // Each answer reached its own worker.
  tally.check(
    report.includes(`Hotel: a place in Alfama, ${ANSWERS.w1}`) &&
      report.includes(`Flight: the ${ANSWERS.w2} flight`),
    () => `${id} (${point}): an answer went to the wrong worker: ${report}`,
  );
  // No finished worker ran again: after both workers, only the parent's call is left; between
  // them, the second worker's and the parent's.
  const left = { 'parent resumes': 1, 'between workers': 2 } as Partial<Record<KillPoint, number>>;
  const expected = left[point];
  if (expected !== undefined) {
    tally.check(
      recoveryCalls === expected,
      () => `${id} (${point}): recovery made ${recoveryCalls} model calls, not ${expected}`,
    );
  }
  const pauses = (await cli(['paused-states', 'list', '--all', '--limit', '1000'])).filter(
    (e) => e.type === 'pause' && e.conversationId === id,
  );
  if (pauses.length > 2) tally.duplicate(`${id} (${point}): ${pauses.length} questions asked`);
  tally.check(
    pauses.length === 2 && pauses.every((p) => p.resumed),
    () => `${id} (${point}): questions ${JSON.stringify(pauses.map((p) => [p.token, p.resumed]))}`,
  );
}

/** The delegate flow killed at each step and recovered, on the embedded default. */
export async function delegateEmbedded(tally: Tally): Promise<void> {
  // Each command starts PGlite (seconds): the quick run leaves this kind to the full run.
  if (quick) return tally.skip('full run only (pnpm test:reliability): each command starts PGlite');
  const data = mkdtempSync(join(tmpdir(), 'x-rel-delegate-'));
  const base = ['--data', data, '--model', 'scripted:team'];
  try {
    await rounds(tally, base, {}, KILL_POINTS);
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

/** The delegate flow killed at each step and recovered, on PostgreSQL. */
export async function delegatePostgres(tally: Tally): Promise<void> {
  const database = await createDatabase();
  try {
    // The quick run kills between two workers: no finished worker runs again, no answer is lost.
    await rounds(tally, ['--model', 'scripted:team'], { DATABASE_URL: database.url }, [
      'between workers',
    ]);
  } finally {
    await database.drop();
  }
}

async function rounds(
  tally: Tally,
  base: string[],
  env: NodeJS.ProcessEnv,
  quickPoints: readonly KillPoint[],
) {
  const cli: Cli = async (args, extra = {}) => {
    const run = await runRunner([...args, '--json', ...base], { ...env, ...extra });
    if (run.code !== 0)
      throw new Error(`runner ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
    return events(run.stdout);
  };
  const kill: KillWake = (extra, when) => killWake(base, { ...env, ...extra }, when);
  for (let r = 0; r < ROUNDS; r++) {
    for (const point of quick ? quickPoints : KILL_POINTS) {
      await round(tally, cli, kill, point, `team-${r}-${point.replaceAll(' ', '-')}`);
    }
  }
}
