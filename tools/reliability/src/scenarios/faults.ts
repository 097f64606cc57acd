import { randomUUID } from 'node:crypto';
import {
  startThrowawayCluster,
  type ThrowawayCluster,
  throwawayClusterProblem,
} from '@internal/pg-test';
import { AskUserError, AskUserStore } from '@x/askuser';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { knob } from '../knobs.js';
import { sleep } from '../proc.js';
import type { Tally } from '../report.js';
import {
  answer,
  answerBatch,
  exec,
  Outcomes,
  openRunnerStorage,
  type Storage,
  startWaker,
  stopConversation,
  TRIP_ANSWERS,
  type Waker,
} from '../runner.js';
import { client, createDatabase, type RunDatabase } from '../server.js';
import { exactlyOnce, settled } from './load.js';

const ROUNDS = knob('RELIABILITY_FAULT_ROUNDS', 20, 6);
// How long the server stays down: past the leases (3 s) in the full run, past the model calls in the quick one.
const OUTAGE_MS = knob('RELIABILITY_OUTAGE_MS', 4_000, 2_000);

function named(url: string, name: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', name);
  return u.toString();
}

/** Waits until a backend of `name` matches `state`, returns its pid (or undefined on timeout). */
async function backendOf(
  sql: postgres.Sql,
  name: string,
  where: postgres.PendingQuery<postgres.Row[]>,
  timeoutMs = 30_000,
) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const [row] =
      await sql`select pid from pg_stat_activity where application_name = ${name} and ${where} limit 1`;
    if (row) return row.pid as number;
    await sleep(5);
  }
  return undefined;
}

async function terminate(sql: postgres.Sql, pid: number): Promise<boolean> {
  const [row] = await sql`select pg_terminate_backend(${pid}) as done`;
  return Boolean(row?.done);
}

/** A fresh database with the runner's storage and a small client on it, dropped afterwards. */
export async function withDatabase(
  fn: (db: RunDatabase, sql: postgres.Sql, storage: Storage) => Promise<void>,
  server?: string,
) {
  const database = await createDatabase(server);
  const storage = await openRunnerStorage(database.url);
  const sql = client(database.url, 3);
  try {
    await fn(database, sql, storage);
  } finally {
    await storage.close().catch(() => {});
    await sql.end({ timeout: 5 });
    await database.drop();
  }
}

const typedAskUser = (e: unknown) => AskUserError.is(e);

/**
 * markResumedBatch's connection is terminated while the statement holds some row locks and
 * waits for the next (a blocker holds one row): the batch must fail typed and resolve
 * nothing; the retry must resolve all. Half the rounds terminate at a random moment instead.
 */
export async function batchFault(tally: Tally): Promise<void> {
  await withDatabase(async (database, sql) => {
    const writer = postgres(named(database.url, 'rel-batch'), { max: 1, onnotice: () => {} });
    const store = new AskUserStore(drizzle({ client: writer }));
    const setup = new AskUserStore(drizzle({ client: sql }));
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const tokens = Array.from(
          { length: 40 },
          (_, i) => `b${round}-${String(i).padStart(2, '0')}-${randomUUID()}`,
        ).sort();
        for (const token of tokens) {
          await setup.insert({
            token,
            conversationId: `batch-${round}`,
            kind: 'ask_user',
            question: 'Go?',
            toolCallId: `call_${token}`,
          });
        }
        const batch = tokens.map((token) => ({
          token,
          answer: { action: 'accept' as const, content: token },
        }));
        const blocked = round % 2 === 0;
        let release = () => {};
        let held: Promise<unknown> = Promise.resolve();
        if (blocked) {
          let unlock = () => {};
          const gate = new Promise<void>((r) => {
            unlock = r;
          });
          let locked = () => {};
          const lockTaken = new Promise<void>((r) => {
            locked = r;
          });
          held = sql.begin(async (tx) => {
            await tx`select token from aura.paused_states where token = ${tokens[20]!} for update`;
            locked();
            await gate;
          });
          await lockTaken;
          release = unlock;
        }
        const attempt = store.markResumedBatch(batch).then(
          () => 'ok',
          (error: unknown) => error,
        );
        let pid: number | undefined;
        if (blocked) pid = await backendOf(sql, 'rel-batch', sql`wait_event_type = 'Lock'`);
        else {
          await sleep(Math.random() * 15);
          pid = await backendOf(sql, 'rel-batch', sql`state = 'active'`, 1);
        }
        if (pid !== undefined && (await terminate(sql, pid))) tally.faults++;
        const outcome = await attempt;
        release();
        await held;
        tally.cases++;
        const [row] =
          await sql`select count(*)::int as n from aura.paused_states where token in ${sql(tokens)} and resumed_at is not null`;
        const answered = row?.n as number;
        if (outcome === 'ok') {
          tally.check(
            answered === tokens.length,
            () => `round ${round}: batch succeeded but ${answered}/${tokens.length} answered`,
          );
          continue;
        }
        tally.check(
          typedAskUser(outcome),
          () => `round ${round}: untyped error ${(outcome as Error)?.stack ?? outcome}`,
        );
        tally.check(
          answered === 0,
          () => `round ${round}: failed batch left ${answered}/${tokens.length} answered (partial)`,
        );
        // The caller retries (the client notices the dead connection on the next call or two).
        let retry: unknown;
        for (let attempt = 0; attempt < 10 && retry !== tokens.length; attempt++) {
          retry = await store.markResumedBatch(batch).catch((e: unknown) => e);
          if (retry !== tokens.length) {
            tally.check(
              typedAskUser(retry),
              () => `round ${round}: untyped error on retry: ${String(retry)}`,
            );
            await sleep(100);
          }
        }
        if (retry !== tokens.length)
          tally.loss(`round ${round}: the batch never went through on retry: ${String(retry)}`);
      }
      tally.note(
        `${tally.faults} markResumedBatch connections terminated (half while blocked mid-statement on a row lock)`,
      );
    } finally {
      await writer.end({ timeout: 5 });
    }
  });
}

/**
 * The runner's suspend write (pause row + continuation in one transaction) loses its
 * connection after the pause row is written and while the continuation insert waits (the
 * continuation table is locked against writes): neither row may remain; a retry suspends.
 */
export async function suspendFault(tally: Tally): Promise<void> {
  await withDatabase(async (database, sql) => {
    const storage = await openRunnerStorage(named(database.url, 'rel-suspend'));
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const conversationId = `suspend-${round}`;
        let unlock = () => {};
        const gate = new Promise<void>((r) => {
          unlock = r;
        });
        let locked = () => {};
        const lockTaken = new Promise<void>((r) => {
          locked = r;
        });
        const held = sql.begin(async (tx) => {
          await tx`lock table x_continuation.suspensions in share row exclusive mode`;
          locked();
          await gate;
        });
        await lockTaken;
        const attempt = exec(storage, conversationId).then(
          () => 'ok',
          (error: unknown) => error,
        );
        const pid = await backendOf(
          sql,
          'rel-suspend',
          sql`wait_event_type = 'Lock' and query ilike 'insert into "x_continuation"%'`,
        );
        if (pid !== undefined && (await terminate(sql, pid))) tally.faults++;
        else tally.fail(`round ${round}: the suspend write never reached the continuation insert`);
        const outcome = await attempt;
        unlock();
        await held;
        tally.cases++;
        tally.check(
          outcome !== 'ok',
          () => `round ${round}: the suspend succeeded although its connection was terminated`,
        );
        const [row] = await sql`
          select (select count(*) from aura.paused_states where conversation_id = ${conversationId})::int as pauses,
                 (select count(*) from x_continuation.suspensions where session_id = ${conversationId})::int as continuations,
                 (select count(*) from x_continuation.runs where conversation_id = ${conversationId})::int as runs`;
        tally.check(
          row?.pauses === 0 && row?.continuations === 0 && row?.runs === 0,
          () =>
            `round ${round}: partial suspend left ${row?.pauses} pause row(s), ${row?.continuations} continuation(s) and ${row?.runs} run(s)`,
        );
        // The next suspend of the same conversation works.
        await exec(storage, conversationId);
        await stopConversation(storage, conversationId);
      }
      await settled(sql, tally, 'suspend');
      tally.note(
        `${tally.faults} suspend transactions terminated after the pause row, before the continuation`,
      );
    } finally {
      await storage.close();
    }
  });
}

/**
 * `runner wake`'s terminal write loses its connection while it waits on a lock the scenario
 * holds on the run row: in even rounds the transaction of a turn that asked again (the run,
 * the new question, the old continuation), in odd rounds the one statement that completes a
 * run and resolves its continuation (after the trip's last answer). Nothing of it may commit;
 * the wake recovers by itself, the run's lease (1.5 s here) runs out, and a new attempt
 * resumes it, exactly once.
 */
export async function terminalFault(tally: Tally): Promise<void> {
  await withDatabase(async (database, sql, storage) => {
    const outcomes = new Outcomes();
    const resumed = new Map<string, number>();
    const waker = await startWaker(
      sql,
      database.url,
      [],
      { RUNNER_SCRIPTED_DELAY_MS: '300', RUNNER_LEASE_MS: '1500' },
      outcomes.deliver,
      resumed,
    );
    const answered: string[] = [];
    const rounds = Math.ceil(ROUNDS / 2);
    let completing = 0;
    try {
      for (let round = 0; round < rounds; round++) {
        const conversationId = `terminal-${round}`;
        const completes = round % 2 === 1;
        let token = await exec(storage, conversationId);
        // The trip asks three questions: its first two answers go through untouched, so that
        // the fault hits the write that completes the run.
        for (const content of completes ? TRIP_ANSWERS.slice(0, 2) : []) {
          const next = outcomes.next(conversationId, 120_000);
          await answer(storage, token, { action: 'accept', content });
          answered.push(token);
          const event = await next;
          if (event?.type !== 'run-waiting') {
            tally.fail(`round ${round}: after "${content}" the wake reported ${event?.type}`);
            break;
          }
          token = String(event.token);
        }
        const outcome = outcomes.next(conversationId, 120_000);
        const content = TRIP_ANSWERS[completes ? 2 : 0] ?? '';
        await answer(storage, token, { action: 'accept', content });
        answered.push(token);
        // Once the run is claimed (its model call takes 300 ms), hold its row so that the
        // terminal write waits on it.
        for (let i = 0; i < 6_000; i++) {
          const [run] =
            await sql`select status from x_continuation.runs where conversation_id = ${conversationId}`;
          if (run?.status === 'running') break;
          await sleep(5);
        }
        let unlock = () => {};
        const gate = new Promise<void>((r) => {
          unlock = r;
        });
        let locked = () => {};
        const lockTaken = new Promise<void>((r) => {
          locked = r;
        });
        const held = sql.begin(async (tx) => {
          await tx`select 1 from x_continuation.runs where conversation_id = ${conversationId} for update`;
          locked();
          await gate;
        });
        await lockTaken;
        const pid = await backendOf(
          sql,
          waker.name,
          completes
            ? sql`wait_event_type = 'Lock' and query ilike '%resolved as (update "x_continuation"."suspensions"%'`
            : sql`wait_event_type = 'Lock' and query ilike '%update "x_continuation"."runs" r set status = ''waiting''%'`,
        );
        if (pid !== undefined && (await terminate(sql, pid))) {
          tally.faults++;
          if (completes) completing++;
        } else tally.fail(`round ${round}: never saw the terminal write wait`);
        unlock();
        await held.catch(() => {});
        const event = await Promise.race([outcome, waker.proc.done.then(() => undefined)]);
        tally.cases++;
        if (!event) {
          tally.loss(`round ${round}: ${token} not resumed within 120 s of the fault`);
          if (waker.proc.child.exitCode !== null) break; // the wake died: report it once
        } else {
          const want = completes ? 'run-completed' : 'run-waiting';
          tally.check(event.type === want, () => `round ${round}: ${event.type}, want ${want}`);
        }
      }
      await sleep(1_000);
      const crashed = waker.proc.child.exitCode;
      tally.check(
        crashed === null,
        () =>
          `runner wake died during the faults (exit ${crashed}): ${waker.proc.stderr.slice(-600)}`,
      );
      await waker.stop();
      exactlyOnce(tally, answered, resumed, 'terminal');
      await settled(sql, tally, 'terminal', { waiting: rounds - Math.floor(rounds / 2) });
      const logged =
        (waker.proc.stdout + waker.proc.stderr).match(/database unavailable/g)?.length ?? 0;
      tally.check(logged > 0, () => 'the wake logged no line while recovering');
      tally.note(
        `${tally.faults} terminal writes terminated mid-write (${completing} of them the statement that completes a run); the wake logged ${logged} recovery line(s), and each run was resumed once by a later attempt`,
      );
    } finally {
      await waker.stop();
    }
  });
}

/**
 * PostgreSQL is stopped and started while two `runner wake` processes resume answered
 * pauses: afterwards every answered pause is resumed exactly once, nothing is half-done,
 * and each wake logged that it was waiting for the database.
 */
export async function restartFault(tally: Tally): Promise<void> {
  const denied = throwawayClusterProblem();
  if (denied !== undefined) {
    if (process.env.CI === 'true')
      tally.fail(`cannot start a throwaway PostgreSQL in CI: ${denied}`);
    else tally.skip(`cannot start a throwaway PostgreSQL here: ${denied}`);
    return;
  }
  // Only a server this scenario started may be stopped: never the machine's own.
  const cluster = await startThrowawayCluster();
  try {
    await restartUnderWake(tally, cluster);
  } finally {
    await cluster.destroy();
  }
}

async function restartUnderWake(tally: Tally, cluster: ThrowawayCluster): Promise<void> {
  await withDatabase(async (database, sql, storage) => {
    const outcomes = new Outcomes();
    const resumed = new Map<string, number>();
    const wakers: Waker[] = [];
    let stopped = false;
    try {
      for (let i = 0; i < 2; i++) {
        wakers.push(
          await startWaker(
            sql,
            database.url,
            ['--concurrency', '8'],
            // Stopped during the model calls; runs in flight then are taken again once their
            // lease runs out.
            { RUNNER_SCRIPTED_DELAY_MS: '1500', RUNNER_LEASE_MS: '3000' },
            outcomes.deliver,
            resumed,
          ),
        );
      }
      const tokens: string[] = [];
      for (let i = 0; i < 30; i++) tokens.push(await exec(storage, `restart-${i}`));
      // Answer all, then pull the server away while the wakes are resuming them.
      await answerBatch(
        storage,
        tokens.map((token) => ({ token, answer: { action: 'accept', content: 'Kyoto' } })),
      );
      await sleep(100);
      await cluster.stop();
      stopped = true;
      tally.faults++;
      await sleep(OUTAGE_MS);
      await cluster.start();
      stopped = false;
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline && tokens.some((t) => !resumed.has(t))) await sleep(200);
      await sleep(1_000);
      const unresumed = tokens.filter((t) => !resumed.has(t));
      // Read while the wakes still run: where each stuck run stands, and what each wake does.
      if (unresumed.length) await describeStuck(sql, tally, unresumed, wakers);
      for (const w of wakers) await w.stop();
      tally.cases += tokens.length;
      exactlyOnce(tally, tokens, resumed, 'restart');
      await settledAfterRestart(sql, tally);
      for (const [i, w] of wakers.entries()) {
        const lines = (w.proc.stdout + w.proc.stderr).match(/database unavailable[^\n]*/g) ?? [];
        tally.check(
          w.proc.child.exitCode === 0,
          () => `wake ${i} exited ${w.proc.child.exitCode}: ${w.proc.stderr.slice(-500)}`,
        );
        if (lines.length)
          tally.note(
            `wake ${i} logged ${lines.length} line(s) while waiting, e.g. "${lines[0]!.slice(0, 140)}"`,
          );
        else tally.note(`wake ${i} was idle during the outage (no line logged)`);
      }
      const logged = wakers.some((w) => /database unavailable/.test(w.proc.stdout + w.proc.stderr));
      tally.check(logged, () => 'no wake logged that the database was unavailable');
    } finally {
      if (stopped) await cluster.start();
      for (const w of wakers) await w.stop();
    }
  }, cluster.url);
}

/** Notes the rows of the runs not resumed, their queue rows, and what the wakes' connections do. */
async function describeStuck(
  sql: postgres.Sql,
  tally: Tally,
  tokens: string[],
  wakers: Waker[],
): Promise<void> {
  const runs = await sql`
    select r.interaction_id as token, r.status, r.attempts, r.lost_attempts, r.lease_owner,
           r.lease_holder, r.claimable_at - now() as claimable_in, r.last_error,
           (select json_agg(json_build_object('at', q.claimable_at - now(), 'leased', q.leased,
                   'holder', q.lease_holder, 'same', q.claimable_at = r.claimable_at))
              from x_continuation.run_queue q where q.run_id = r.run_id) as queue
      from x_continuation.runs r where r.interaction_id = any(${tokens})`;
  for (const row of runs) tally.note(`stuck run: ${JSON.stringify(row)}`);
  const names = wakers.map((w) => w.name);
  // All idle while a run is stuck: the wake waits on its driver, not on the server.
  const sessions = await sql`
    select application_name as wake, state, count(*)::int as connections,
           max(now() - state_change) as longest,
           array_agg(distinct left(query, 80)) filter (where state <> 'idle') as running
      from pg_stat_activity where application_name = any(${names}) group by 1, 2 order by 1, 2`;
  for (const row of sessions) tally.note(`wake connections: ${JSON.stringify(row)}`);
}

/** After the restart: every answered run went on, with nothing half-done. */
async function settledAfterRestart(sql: postgres.Sql, tally: Tally): Promise<void> {
  const [row] = await sql`
    select (select count(*) from x_continuation.runs where status in ('ready', 'running'))::int as unresumed,
           (select count(*) from aura.paused_states p where not exists
             (select 1 from x_continuation.suspensions s where s.interaction_id = p.token))::int as partial`;
  if (row?.unresumed)
    tally.loss(`${row.unresumed} answered run(s) left unresumed after the restart`);
  tally.check(
    !row?.partial,
    () => `${row?.partial} pause row(s) without a continuation after the restart`,
  );
}
