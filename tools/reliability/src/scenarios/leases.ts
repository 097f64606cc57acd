import { knob } from '../knobs.js';
import type { CliEvent } from '../proc.js';
import { sleep } from '../proc.js';
import type { Tally } from '../report.js';
import { answer, answerBatch, exec, Outcomes, startWaker, type Waker } from '../runner.js';
import { withDatabase } from './faults.js';
import { exactlyOnce, settled } from './load.js';

/**
 * A worker stalls past its lease in the middle of a model call (SIGSTOP): its session lives,
 * so its lease holds until it expires; then another worker takes the run over and ends it; when the stalled one wakes up (SIGCONT), its write is
 * refused and it says so. Exactly one terminal commit per run.
 */
export async function stalledWorker(tally: Tally): Promise<void> {
  const rounds = knob('RELIABILITY_STALL_ROUNDS', 6, 2);
  await withDatabase(async (database, sql, storage) => {
    const lease = { RUNNER_LEASE_MS: '1500' };
    const events: CliEvent[] = [];
    const slow = await startWaker(
      sql,
      database.url,
      [],
      { ...lease, RUNNER_SCRIPTED_DELAY_MS: '3000' },
      () => {},
    );
    slow.proc.onEvent((event) => events.push(event));
    let fast: Waker | undefined;
    const answered: string[] = [];
    try {
      const resumed = new Map<string, number>();
      for (let round = 0; round < rounds; round++) {
        const conversationId = `stall-${round}`;
        const token = await exec(storage, conversationId);
        await answer(storage, token, { action: 'accept', content: 'Lisbon' });
        answered.push(token);
        // The slow worker holds it, mid model call.
        for (let i = 0; i < 2_000; i++) {
          const [run] =
            await sql`select status from x_continuation.runs where conversation_id = ${conversationId}`;
          if (run?.status === 'running') break;
          await sleep(5);
        }
        slow.proc.child.kill('SIGSTOP');
        tally.faults++;
        // Stopped, not dead: its session still holds its lease-holder lock, so the lease
        // counts until it expires.
        const [held] = (await storage.runs().leases()).filter(
          (l) => l.conversationId === conversationId,
        );
        tally.check(
          held?.holder === 'alive',
          () =>
            `round ${round}: the stopped worker's lease reads ${held?.holder ?? 'absent'}, not alive`,
        );
        const outcomes = new Outcomes();
        const outcome = outcomes.next(conversationId, 120_000);
        fast = await startWaker(
          sql,
          database.url,
          [],
          { ...lease, RUNNER_SCRIPTED_DELAY_MS: '10' },
          outcomes.deliver,
          resumed,
        );
        const event = await outcome;
        tally.cases++;
        if (event?.type !== 'run-waiting') {
          tally.loss(`round ${round}: the run was not taken over (${event?.type ?? 'no event'})`);
        }
        await fast.stop();
        fast = undefined;
        slow.proc.child.kill('SIGCONT');
        const refused = await waitFor(
          () => events.find((e) => e.type === 'run-lease-lost' && e.token === token),
          60_000,
        );
        tally.check(
          refused !== undefined,
          () => `round ${round}: the stalled worker did not report its lost lease`,
        );
        const [row] =
          await sql`select count(*)::int as n from aura.paused_states where conversation_id = ${conversationId}`;
        if (row?.n !== 2)
          tally.duplicate(`round ${round}: ${row?.n} questions, want 2 (one terminal write)`);
      }
      for (const e of events) {
        if (e.type === 'resumed')
          resumed.set(String(e.token), (resumed.get(String(e.token)) ?? 0) + 1);
      }
      exactlyOnce(tally, answered, resumed, 'stall');
      await settled(sql, tally, 'stall', { waiting: rounds });
      tally.note(
        `${rounds} workers stopped mid-call past their lease; each run was taken over once and each stalled write refused`,
      );
    } finally {
      slow.proc.child.kill('SIGCONT');
      await fast?.stop();
      await slow.stop();
    }
  });
}

/**
 * Three `wake` processes × `--concurrency 16` with a 2 s model and a pool of 4 connections
 * each: every run completes once, and more runs are in their model call at once than
 * there are connections (no connection is held while a model runs).
 */
export async function poolScale(tally: Tally): Promise<void> {
  const runs = knob('RELIABILITY_SCALE_RUNS', 192, 48);
  await withDatabase(async (database, sql, storage) => {
    const resumed = new Map<string, number>();
    const wakers: Waker[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        wakers.push(
          await startWaker(
            sql,
            database.url,
            ['--concurrency', '16'],
            { RUNNER_SCRIPTED_DELAY_MS: '2000', RUNNER_DB_POOL: '4' },
            () => {},
            resumed,
          ),
        );
      }
      const tokens: string[] = [];
      for (let i = 0; i < runs; i++) tokens.push(await exec(storage, `scale-${i}`));
      const started = performance.now();
      await answerBatch(
        storage,
        tokens.map((token) => ({ token, answer: { action: 'accept', content: 'Lisbon' } })),
      );
      let most = 0;
      while (tokens.some((t) => !resumed.has(t)) && performance.now() - started < 120_000) {
        const [row] =
          await sql`select count(*)::int as n from x_continuation.runs where status = 'running'`;
        most = Math.max(most, row?.n ?? 0);
        await sleep(100);
      }
      const seconds = (performance.now() - started) / 1000;
      await sleep(500);
      tally.cases += tokens.length;
      exactlyOnce(tally, tokens, resumed, 'scale');
      const connections = 3 * 4;
      tally.check(
        most > connections,
        () =>
          `at most ${most} runs were in their model call at once: not more than the ${connections} pooled connections`,
      );
      tally.note(
        `${tokens.length} runs, 3 wakes × 16 workers, pools of 4: up to ${most} model calls at once on ${connections} connections; ${(tokens.length / seconds).toFixed(1)} runs/s (2 s model; workers × concurrency / 2 s = 24/s)`,
      );
    } finally {
      for (const w of wakers) await w.stop();
    }
    await settled(sql, tally, 'scale', { waiting: runs });
  });
}

async function waitFor<T>(find: () => T | undefined, timeoutMs: number): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined || Date.now() > deadline) return found;
    await sleep(50);
  }
}
