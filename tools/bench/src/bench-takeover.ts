// Recovery after a crash: the time from a wake's SIGKILL, mid model call, until another
// worker claims its run, with the default lease (60 s) that it no longer waits for.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { leasePolicyFromEnv } from 'runner/dist/config/executive-policy.js';
import { answerBatch, resumeNext, startRun, wake } from 'runner/dist/executive/index.js';
import { ScriptedModel } from 'runner/dist/model/scripted.js';
import { openStorage, type Storage } from 'runner/dist/storage/index.js';
import type { Context, Server } from './context.js';
import { statsOf } from './measure.js';
import { benchStorage } from './runner-cycle.js';

const CLI = createRequire(import.meta.url).resolve('runner/dist/cli.js');
const trip = new ScriptedModel('trip');
const quiet = { event() {} };
const TARGET_S = 1;

/** A run of a new conversation, answered: ready to claim. */
async function answeredRun(storage: Storage, conversationId: string): Promise<string> {
  const run = await startRun(storage, trip, 'Plan a trip', conversationId, quiet);
  if (run.status !== 'waiting') throw new Error(`${conversationId}: ${run.status}`);
  await answerBatch(storage, [
    { token: run.token, answer: { action: 'accept', content: 'Lisbon' } },
  ]);
  return run.token;
}

/** Starts `runner wake --json` in an endless model call; resolves once it is in that call. */
async function wakeInModelCall(env: NodeJS.ProcessEnv, args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, 'wake', '--json', ...args], {
    env: { ...process.env, NO_COLOR: '1', RUNNER_SCRIPTED_DELAY_MS: '600000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => {
    err += d;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += d;
      if (out.includes('"type":"model-call"')) resolve();
    });
    child.once('exit', () => reject(new Error(`runner wake exited: ${err}`)));
  });
  return child;
}

function killed(child: ChildProcess): Promise<number> {
  const at = performance.now();
  child.kill('SIGKILL');
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(at);
    else child.once('exit', () => resolve(at));
  });
}

function addRow(ctx: Context, storage: string, seconds: number[], note: string): void {
  const stats = statsOf(seconds.map((s) => s * 1000));
  const median = stats.median / 1000;
  ctx.add({
    section: 'takeover',
    name: `recovery after a SIGKILL mid-call, ${storage}, default lease (median of ${seconds.length})`,
    goal: { kind: 'at-most', value: TARGET_S, label: '≤ 1 s' },
    ratio: median,
    ratioMeaning: 's from the kill to the claim',
    subject: stats,
    extra: { seconds },
    note: median <= TARGET_S ? note : `missed: ${note}`,
  });
}

/**
 * PostgreSQL: a wake loop in this process waits while a `runner wake` child holds a run in its
 * model call; the child is SIGKILLed, and the row is the time until the loop claims the run.
 */
export async function benchTakeoverPostgres(ctx: Context, server: Server): Promise<void> {
  const rounds = ctx.quick ? 3 : 10;
  const storage = await benchStorage(ctx.tmp, server.url);
  const seconds: number[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      const token = await answeredRun(storage, `takeover-${round}`);
      const child = await wakeInModelCall({ DATABASE_URL: server.url }, []);
      let stop = () => {};
      const stopped = new Promise<void>((resolve) => {
        stop = resolve;
      });
      let claimedAt = 0;
      let killedAt = 0;
      const loop = wake(storage, {
        once: false,
        concurrency: 1,
        policy: leasePolicyFromEnv({}),
        modelFor: () => trip,
        observerFor: () => quiet,
        onClaimed: (run) => {
          if (run.token === token) claimedAt = performance.now();
        },
        onResumed: (done) => {
          if (done.token === token) stop();
        },
        onUnavailable: () => {},
        stop: stopped,
      });
      // The loop is idle (nothing claimable) before the kill.
      await new Promise((resolve) => setTimeout(resolve, 500));
      killedAt = await killed(child);
      await loop;
      seconds.push((claimedAt - killedAt) / 1000);
    }
  } finally {
    await storage.close();
  }
  addRow(
    ctx,
    'PostgreSQL',
    seconds,
    'a waiting wake loop takes the run once the killed process’s session is gone (its lease-holder lock freed); it looks every 300 ms while live leases are held elsewhere. Before: the lease, 60 s',
  );
}

/**
 * The embedded default: a `runner wake` child holds a run in its model call on a data folder
 * and is SIGKILLed; this process then opens the folder (its lock, PGlite) and claims. The row
 * is the time from the kill to the claim, the note how much of it was opening the folder.
 */
export async function benchTakeoverEmbedded(ctx: Context): Promise<void> {
  const rounds = ctx.quick ? 3 : 10;
  const dataDir = mkdtempSync(path.join(ctx.tmp, 'takeover-'));
  const seconds: number[] = [];
  const opening: number[] = [];
  const policy = leasePolicyFromEnv({});
  for (let round = 0; round < rounds; round++) {
    const before = await openStorage({ dataDir, command: 'bench', log: () => {} });
    const token = await answeredRun(before, `takeover-${round}`).finally(() => before.close());
    const child = await wakeInModelCall({}, ['--data', dataDir]);
    const killedAt = await killed(child);
    const storage = await openStorage({ dataDir, command: 'bench', log: () => {} });
    const opened = performance.now();
    try {
      let claimedAt = 0;
      const resumed = await resumeNext(storage, {
        policy,
        modelFor: () => trip,
        observerFor: () => quiet,
        onClaimed: () => {
          claimedAt = performance.now();
        },
      });
      if (resumed?.token !== token) throw new Error(`round ${round}: resumed ${resumed?.token}`);
      seconds.push((claimedAt - killedAt) / 1000);
      opening.push((opened - killedAt) / 1000);
    } finally {
      await storage.close();
    }
  }
  const open = statsOf(opening.map((s) => s * 1000)).median / 1000;
  const claim = statsOf(seconds.map((s, i) => (s - (opening[i] ?? 0)) * 1000)).median / 1000;
  addRow(
    ctx,
    'embedded',
    seconds,
    `opening the data folder (its lock, then PGlite) took ${open.toFixed(2)} s of it (median), the claim after it ${claim.toFixed(2)} s: the next holder of the folder's lock takes the run at once, and PGlite's start is the rest. Before: the lease, 60 s`,
  );
}
