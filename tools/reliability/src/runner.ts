// The runner's own code, used in process by the clients of the load and fault scenarios.
// The runner has no exports map, so its built files are imported directly.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type postgres from 'postgres';
import { answer, answerBatch, startRun, stopConversation } from 'runner/dist/executive/index.js';
import { modelFromId } from 'runner/dist/model/index.js';
import { openStorage, type Storage } from 'runner/dist/storage/index.js';
import { type CliEvent, type RunnerProcess, sleep, startRunner } from './proc.js';
import type { Tally } from './report.js';

export type { Storage };
export { answer, answerBatch, startRun, stopConversation };

/** The scripted model every scenario uses: three questions per conversation. */
export const MODEL = 'scripted:trip';
/** Answers to the trip's three questions, in order. */
export const TRIP_ANSWERS = ['Lisbon', '3', 'ok'];

/** Opens the runner's storage on `url` (migrating it), as `runner` itself does. */
export function openRunnerStorage(url: string): Promise<Storage> {
  return openStorage({
    // Only the embedded default keeps files: on PostgreSQL the data folder is never made.
    dataDir: join(tmpdir(), 'x-rel-runner-unused'),
    databaseUrl: url,
    command: 'reliability',
    log: () => {},
  });
}

/** Starts a conversation until its first question; returns the token. */
export async function exec(storage: Storage, conversationId: string): Promise<string> {
  const result = await startRun(storage, modelFromId(MODEL), 'Plan a trip', conversationId, {
    event: () => {},
  });
  if (result.status !== 'waiting') throw new Error(`exec ${conversationId}: ${result.status}`);
  return result.token;
}

/** A `runner wake` process and what it reported. */
export interface Waker {
  proc: RunnerProcess;
  /** Its connections' application_name. */
  name: string;
  /** How often each token was reported resumed. */
  resumed: Map<string, number>;
  stop(): Promise<void>;
}

/**
 * Starts `runner wake --json` on `url`; `onOutcome` gets each conversation's next state
 * (`run-waiting` / `run-completed` / `run-cancelled`) as the wake reports it.
 */
export async function startWaker(
  sql: postgres.Sql,
  url: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  onOutcome: (event: CliEvent) => void,
  resumed = new Map<string, number>(),
): Promise<Waker> {
  // Named, so fault scenarios can find its connections, and so we can see it LISTEN.
  const name = `rel-wake-${++wakers}`;
  const proc = startRunner(['wake', '--json', ...args], {
    DATABASE_URL: url,
    PGAPPNAME: name,
    ...env,
  });
  proc.onEvent((event) => {
    if (event.type === 'resumed') {
      const token = String(event.token);
      resumed.set(token, (resumed.get(token) ?? 0) + 1);
    } else if (OUTCOMES.has(event.type)) onOutcome(event);
  });
  const deadline = Date.now() + 60_000;
  // --json prints no notes: it is ready once its LISTEN connection is up.
  while (
    (
      await sql`select 1 from pg_stat_activity where application_name = ${name} and query ilike 'listen%'`
    ).length === 0
  ) {
    if (Date.now() > deadline || proc.child.exitCode !== null) {
      throw new Error(`runner wake did not start: ${proc.stderr || proc.stdout}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    proc,
    name,
    resumed,
    async stop() {
      proc.child.kill('SIGTERM');
      const timer = setTimeout(() => proc.child.kill('SIGKILL'), 15_000);
      await proc.done;
      clearTimeout(timer);
    },
  };
}

let wakers = 0;

/** The events that say where a run stands after an attempt (not retries or lost leases). */
const OUTCOMES = new Set(['run-waiting', 'run-completed', 'run-cancelled', 'run-failed']);

/** Routes wake outcomes to whoever waits for that conversation. */
export class Outcomes {
  readonly #waiting = new Map<string, (event: CliEvent) => void>();

  readonly deliver = (event: CliEvent): void => {
    const id = String(event.conversationId);
    const waiter = this.#waiting.get(id);
    this.#waiting.delete(id);
    waiter?.(event);
  };

  /** The next outcome of `conversationId`; register BEFORE answering. */
  next(conversationId: string, timeoutMs: number): Promise<CliEvent | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(conversationId);
        resolve(undefined);
      }, timeoutMs);
      this.#waiting.set(conversationId, (event) => {
        clearTimeout(timer);
        resolve(event);
      });
    });
  }
}

/**
 * Repeats `round` (which answers what is pending, lets a wake work, and counts the runs) until
 * `want` runs completed; fails `tally` when one failed or was cancelled, or after five minutes,
 * with `why()` (the finishing wake's output).
 */
export async function untilAllCompleted(
  tally: Tally,
  want: number,
  round: () => Promise<{ completed: number; bad: number }>,
  why: () => string,
): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { completed, bad } = await round();
    if (bad) return tally.fail(`${bad} runs failed or were cancelled: ${why()}`);
    if (completed === want) return;
    if (Date.now() > deadline) {
      return tally.fail(`only ${completed} of ${want} runs completed: ${why()}`);
    }
    await sleep(200);
  }
}
