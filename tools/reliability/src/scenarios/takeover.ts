import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { knob, quick } from '../knobs.js';
import {
  type CliEvent,
  nextEvent,
  type RunnerProcess,
  runRunner,
  sleep,
  startRunner,
} from '../proc.js';
import type { Tally } from '../report.js';
import { answer, exec, startWaker } from '../runner.js';
import { withDatabase } from './faults.js';

/** Rounds per storage kind. */
const ROUNDS = knob('RELIABILITY_TAKEOVER_ROUNDS', 5, 1);
/** The default lease: a takeover that waited for it is no takeover. */
const LEASE_MS = 60_000;
/** A model call that never ends by itself: the kill is what ends the first attempt. */
const ENDLESS = { RUNNER_SCRIPTED_DELAY_MS: '600000' };

function kill(proc: RunnerProcess): number {
  proc.child.kill('SIGKILL');
  return performance.now();
}

function summary(seconds: number[]): string {
  const sorted = [...seconds].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  return `median ${median.toFixed(2)} s, max ${(sorted.at(-1) ?? Number.NaN).toFixed(2)} s`;
}

/**
 * A `wake` is SIGKILLed in the middle of a model call, the default lease (60 s) still
 * running; another `wake`, already waiting, takes the run over as soon as the killed one's
 * session is gone and resumes it once. The time from the kill to its claim is noted.
 */
export async function takeoverPostgres(tally: Tally): Promise<void> {
  await withDatabase(async (database, sql, storage) => {
    const times: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const conversationId = `takeover-${round}`;
      const token = await exec(storage, conversationId);
      const first = await startWaker(sql, database.url, [], ENDLESS, () => {});
      const claimed = nextEvent(first.proc, (e) => e.type === 'model-call', 60_000);
      await answer(storage, token, { action: 'accept', content: 'Lisbon' });
      if (!tally.check((await claimed) !== undefined, () => `round ${round}: never claimed`)) {
        await first.stop();
        continue;
      }
      const second = await startWaker(sql, database.url, [], {}, () => {});
      try {
        const taken = nextEvent(
          second.proc,
          (e) => e.type === 'run-claimed' && e.token === token,
          LEASE_MS - 10_000,
        );
        const outcome = nextEvent(
          second.proc,
          (e) => e.type === 'resumed' && e.token === token,
          LEASE_MS,
        );
        const killedAt = kill(first.proc);
        tally.faults++;
        const claim = await taken;
        tally.cases++;
        if (!claim) {
          tally.loss(`round ${round}: not taken over before the lease would have expired`);
          continue;
        }
        times.push((claim.at - killedAt) / 1000);
        tally.check(
          claim.event.attempt === 2,
          () => `round ${round}: taken over as attempt ${claim.event.attempt}, not 2`,
        );
        tally.check(
          (await outcome)?.event.status === 'waiting',
          () => `round ${round}: the taken-over run did not go on to its next question`,
        );
        const [row] =
          await sql`select count(*)::int as n from aura.paused_states where conversation_id = ${conversationId}`;
        if (row?.n !== 2) tally.duplicate(`round ${round}: ${row?.n} questions, want 2`);
      } finally {
        await first.proc.done;
        await second.stop();
      }
    }
    tally.note(
      `${times.length} wakes SIGKILLed mid-call with a 60 s lease; a waiting wake took each run over ${summary(times)} after the kill`,
    );
  });
}

/**
 * On the embedded default, a `wake` is SIGKILLed in the middle of a model call (the
 * default lease); the next `wake` to take the data folder's lock resumes the run at once.
 * Noted: the time from the kill to its claim, and how much of it was that process's start.
 */
export async function takeoverEmbedded(tally: Tally): Promise<void> {
  // Each command starts PGlite (seconds): the quick run leaves this kind to the full run.
  if (quick) return tally.skip('full run only (pnpm test:reliability): each command starts PGlite');
  const data = mkdtempSync(join(tmpdir(), 'x-rel-takeover-'));
  const cli = async (args: string[]) => {
    const run = await runRunner([...args, '--json', '--data', data], {});
    if (run.code !== 0) throw new Error(`runner ${args.join(' ')}: ${run.stderr}`);
    return run.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as CliEvent);
  };
  const times: number[] = [];
  const starts: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const asked = await cli(['exec', 'Plan a trip', '--conversation', `takeover-${round}`]);
      const token = String(asked.find((e) => e.type === 'run-waiting')?.token);
      await cli(['answer', token, '--accept', 'Lisbon']);
      const first = startRunner(['wake', '--json', '--data', data], ENDLESS);
      if (!(await nextEvent(first, (e) => e.type === 'model-call', 120_000))) {
        tally.fail(`round ${round}: never claimed: ${first.stderr}`);
        kill(first);
        continue;
      }
      const killedAt = kill(first);
      tally.faults++;
      await first.done;
      // The claim was durable (PGlite has no WAL writer to flush an asynchronous one), and
      // `runs` says whose it was: a holder that is gone.
      const [run] = (await cli(['runs'])).filter((e) => e.type === 'run');
      tally.check(
        run?.status === 'running' && run.attempts === 1 && run.leaseHolder === 'gone',
        () => `round ${round}: runs showed ${JSON.stringify(run)}, not a claim of a holder gone`,
      );
      const second = startRunner(['wake', '--json', '--data', data], {});
      try {
        const ready = nextEvent(second, (e) => e.type === 'ready', 120_000);
        const claim = await nextEvent(
          second,
          (e) => e.type === 'run-claimed' && e.token === token,
          LEASE_MS - 10_000,
        );
        tally.cases++;
        if (!claim) {
          tally.loss(`round ${round}: not taken over before the lease would have expired`);
          continue;
        }
        times.push((claim.at - killedAt) / 1000);
        const opened = await ready;
        if (opened) starts.push((opened.at - killedAt) / 1000);
        const resumed = await nextEvent(second, (e) => e.type === 'resumed', 60_000);
        tally.check(
          resumed?.event.status === 'waiting',
          () => `round ${round}: the run did not go on to its next question`,
        );
      } finally {
        second.child.kill('SIGTERM');
        await second.done;
      }
      await sleep(0);
    }
    tally.note(
      `${times.length} wakes SIGKILLed mid-call with a 60 s lease; the next wake (after a \`runs\`) took each run over ${summary(times)} after the kill, of which its own start took ${summary(starts)}`,
    );
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}
