import type postgres from 'postgres';
import { knob } from '../knobs.js';
import type { Tally } from '../report.js';
import {
  answer,
  exec,
  Outcomes,
  openRunnerStorage,
  startWaker,
  TRIP_ANSWERS,
  type Waker,
} from '../runner.js';
import { client, createDatabase } from '../server.js';

/** Cycles (suspend → answer → resume) of the load run; 3 per conversation. */
export const CYCLES = knob('RELIABILITY_CYCLES', 2000, 300);
const CLIENTS = 20;
const WAKERS = 3;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

/**
 * Checks the runner's tables after a run: nothing half-done, no answered run left unresumed,
 * and exactly `expected.waiting` runs (and pending questions) still waiting on a person.
 */
export async function settled(
  sql: postgres.Sql,
  tally: Tally,
  what: string,
  expected: { waiting: number } = { waiting: 0 },
): Promise<void> {
  const [row] = await sql`
    select
      (select count(*) from aura.paused_states where resumed_at is null)::int as pending,
      (select count(*) from x_continuation.runs where status in ('ready', 'running'))::int as unresumed,
      (select count(*) from x_continuation.runs where status = 'waiting')::int as waiting,
      (select count(*) from aura.paused_states p where not exists
        (select 1 from x_continuation.suspensions s where s.interaction_id = p.token))::int as pause_without_continuation,
      (select count(*) from x_continuation.suspensions s where not exists
        (select 1 from aura.paused_states p where p.token = s.interaction_id))::int as continuation_without_pause,
      (select count(*) from x_continuation.runs r where r.status = 'waiting' and not exists
        (select 1 from aura.paused_states p where p.token = r.interaction_id and p.resumed_at is null))::int as run_without_question`;
  const r = row as Record<string, number>;
  if (r.unresumed) tally.loss(`${what}: ${r.unresumed} answered run(s) never resumed`);
  tally.check(
    r.pending === expected.waiting && r.waiting === expected.waiting,
    () =>
      `${what}: ${r.pending} pending question(s) and ${r.waiting} waiting run(s), want ${expected.waiting}`,
  );
  tally.check(
    !r.pause_without_continuation,
    () =>
      `${what}: ${r.pause_without_continuation} pause row(s) without a continuation (partial suspend)`,
  );
  tally.check(
    !r.continuation_without_pause,
    () =>
      `${what}: ${r.continuation_without_pause} continuation(s) without a pause row (partial suspend)`,
  );
  tally.check(
    !r.run_without_question,
    () => `${what}: ${r.run_without_question} waiting run(s) whose question is not pending`,
  );
}

/** Every answered token reported resumed exactly once by the wake processes. */
export function exactlyOnce(
  tally: Tally,
  answered: Iterable<string>,
  resumed: Map<string, number>,
  what: string,
): void {
  for (const token of answered) {
    const n = resumed.get(token) ?? 0;
    if (n === 0) tally.loss(`${what}: answered ${token} was never resumed`);
    if (n > 1) tally.duplicate(`${what}: ${token} resumed ${n} times`);
  }
}

/**
 * 20 clients drive the runner's suspend → answer → resume path against one Postgres with
 * 3 `runner wake` processes, for CYCLES cycles: every cycle completes exactly once.
 */
export async function loadScenario(tally: Tally): Promise<void> {
  const database = await createDatabase();
  const storage = await openRunnerStorage(database.url);
  const sql = client(database.url, 2);
  const outcomes = new Outcomes();
  const resumed = new Map<string, number>();
  const wakers: Waker[] = [];
  try {
    for (let i = 0; i < WAKERS; i++) {
      wakers.push(
        await startWaker(sql, database.url, ['--concurrency', '2'], {}, outcomes.deliver, resumed),
      );
    }
    const conversations = Math.ceil(CYCLES / TRIP_ANSWERS.length);
    let nextConversation = 0;
    const latencies: number[] = [];
    const answered: string[] = [];
    const started = performance.now();
    const clientLoop = async (c: number) => {
      while (nextConversation < conversations) {
        const conversationId = `load-${c}-${nextConversation++}`;
        let token = await exec(storage, conversationId);
        for (const [step, content] of TRIP_ANSWERS.entries()) {
          const t0 = performance.now();
          const outcome = outcomes.next(conversationId, 120_000);
          await answer(storage, token, { action: 'accept', content });
          answered.push(token);
          const event = await outcome;
          tally.cases++;
          if (!event) {
            tally.fail(`${conversationId} step ${step}: no outcome within 120 s`);
            return;
          }
          latencies.push(performance.now() - t0);
          const last = step === TRIP_ANSWERS.length - 1;
          if (event.type === 'run-waiting' && !last) token = String(event.token);
          else if (!(event.type === 'run-completed' && last)) {
            tally.fail(`${conversationId} step ${step}: ${event.type}`);
            return;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => clientLoop(c)));
    const seconds = (performance.now() - started) / 1000;
    // A late duplicate would show up in the wakes' output after the last outcome.
    await new Promise((r) => setTimeout(r, 1_000));
    await Promise.all(wakers.map((w) => w.stop()));
    exactlyOnce(tally, answered, resumed, 'load');
    tally.check(
      answered.length === conversations * TRIP_ANSWERS.length,
      () => `${answered.length} cycles answered, want ${conversations * TRIP_ANSWERS.length}`,
    );
    await settled(sql, tally, 'load');
    latencies.sort((a, b) => a - b);
    tally.note(
      `${answered.length} cycles (${conversations} conversations × 3) by ${CLIENTS} clients, ${WAKERS} wake processes × 2 workers: ` +
        `${(answered.length / seconds).toFixed(1)} cycles/s, answer→resumed p50 ${percentile(latencies, 50).toFixed(0)} ms, ` +
        `p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${percentile(latencies, 100).toFixed(0)} ms (${seconds.toFixed(1)} s)`,
    );
  } finally {
    await Promise.all(wakers.map((w) => w.stop()));
    await storage.close();
    await sql.end({ timeout: 5 });
    await database.drop();
  }
}
