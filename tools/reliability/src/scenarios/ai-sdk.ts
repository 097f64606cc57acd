import { type Script, startFakeLlm } from '@internal/fake-llm';
import { startAiSdkRun } from '@x/ai-sdk';
import { answer, migrate, sqlExecutiveStorage } from '@x/executive';
import { drizzle } from 'drizzle-orm/postgres-js';
import {
  createScenarioTables,
  EFFECTS_TABLE,
  KILL_POINTS,
  KILLS_TABLE,
  payingSettings,
} from '../ai-sdk-loop.js';
import { knob } from '../knobs.js';
import { exited, forkChild, sleep } from '../proc.js';
import type { Tally } from '../report.js';
import { client, createDatabase } from '../server.js';

/** SIGKILLs of a resuming worker (full 25: five at each of the five points). */
const KILLS = knob('RELIABILITY_AI_SDK_KILLS', 25, 5);
/** Every third run is declined with a reason; the others are approved. */
const declined = (n: number) => n % 3 === 2;

/**
 * Resumes of "ai-sdk turn" runs (`@x/ai-sdk`) under SIGKILL: runs of a `generateText` loop
 * stopped on a `needsApproval` call are answered (every third declined with a reason), then
 * worker processes resume them, each killing itself at one of five points of a resume (run
 * claimed; tool effect committed; model called; model answered; terminal write committed),
 * 25 kills in all; then a worker that is not killed finishes. Every run must complete; an
 * approved call must have its effect (keyed by the AI SDK's tool call id), its `execute`
 * re-run only after a kill between its effect and the run's write, and the model must read
 * the tool's result once per resume that a kill did not cut after the model answered: a run
 * resumed again after its write committed is a duplicate.
 */
export async function aiSdkKills(tally: Tally): Promise<void> {
  const database = await createDatabase();
  const sql = client(database.url, 4);
  // Each model call that carries the tool's result, by the amount of the run.
  const finals = new Map<number, number>();
  const payer: Script = ({ calls, userText }) => {
    const amount = Number(/\d+/.exec(userText)?.[0]);
    const paid = calls.find((call) => call.name === 'pay');
    if (!paid) return { toolCall: { name: 'pay', input: { amount } } };
    finals.set(amount, (finals.get(amount) ?? 0) + 1);
    return { text: `Done: ${paid.result ?? ''}` };
  };
  const llm = await startFakeLlm(payer);
  try {
    const db = drizzle({ client: sql });
    await migrate(db);
    await createScenarioTables(sql);
    const storage = sqlExecutiveStorage(db);
    const flow = { storage, events: { wants: () => false, record: async () => {} } };
    const settings = payingSettings(llm.url, sql);
    const runs = 2 * KILLS + 3;
    for (let n = 0; n < runs; n++) {
      const ids = { runId: `ai-sdk-${n}`, conversationId: `ai-sdk-${n}` };
      const content = `Pay ${1000 + n}`;
      const started = await startAiSdkRun(flow, ids, settings, [{ role: 'user', content }]);
      if (started.status !== 'waiting') throw new Error(`run ${n} did not ask: ${started.status}`);
      const given = declined(n)
        ? { action: 'decline' as const, content: `over budget ${n}` }
        : { action: 'accept' as const, content: '' };
      await answer(flow, started.token, given);
    }
    tally.cases = runs;
    for (let kill = 0; kill < KILLS; kill++) {
      const point = KILL_POINTS[kill % KILL_POINTS.length] ?? 'claimed';
      const worker = forkChild('ai-sdk-worker', [database.url, llm.url, point]);
      await exited(worker);
      if (worker.signalCode === 'SIGKILL') tally.faults++;
    }
    tally.check(tally.faults === KILLS, () => `${tally.faults} of ${KILLS} workers were killed`);
    // Then workers that are not killed, until every run ended (a cut lease runs out first).
    const deadline = Date.now() + 120_000;
    for (;;) {
      const [row] = await sql<{ open: number }[]>`select count(*)::int as open
        from x_continuation.runs where status not in ('completed', 'failed', 'cancelled')`;
      if (!row?.open) break;
      if (Date.now() > deadline) {
        tally.fail(`${row.open} runs still open after two minutes`);
        break;
      }
      await exited(forkChild('ai-sdk-worker', [database.url, llm.url, 'none']));
      await sleep(200);
    }
    await check(tally, sql, runs, finals);
  } finally {
    await llm.close();
    await sql.end({ timeout: 5 });
    await database.drop();
  }
}

async function check(
  tally: Tally,
  sql: ReturnType<typeof client>,
  runs: number,
  finals: Map<number, number>,
): Promise<void> {
  const storage = sqlExecutiveStorage(drizzle({ client: sql }));
  const effects = await sql<{ amount: number; invocations: number }[]>`
    select amount, invocations from ${sql(EFFECTS_TABLE)}`;
  const kills = await sql<{ run_id: string; point: string }[]>`
    select run_id, point from ${sql(KILLS_TABLE)}`;
  const killsOf = (runId: string, points: string[]) =>
    kills.filter((k) => k.run_id === runId && points.includes(k.point)).length;
  let reinvoked = 0;
  for (let n = 0; n < runs; n++) {
    const runId = `ai-sdk-${n}`;
    const amount = 1000 + n;
    const run = await storage.runs().get(runId);
    if (run?.status !== 'completed') {
      tally.loss(`run ${runId} is ${run?.status}: ${run?.lastError ?? ''}`);
      continue;
    }
    const transcript = JSON.stringify(await storage.runs().transcript(runId));
    const mine = effects.filter((e) => e.amount === amount);
    if (declined(n)) {
      tally.check(mine.length === 0, () => `declined run ${runId} had an effect`);
      tally.check(transcript.includes(`over budget ${n}`), () => `${runId}: the reason is lost`);
    } else {
      const [effect, ...more] = mine;
      if (!effect) tally.loss(`approved run ${runId} had no effect`);
      if (more.length > 0) tally.duplicate(`approved run ${runId} had ${mine.length} effects`);
      tally.check(transcript.includes(`Done: paid ${amount}`), () => `${runId}: no final answer`);
      // execute runs again only when a kill cut the resume between its effect and the write.
      const allowed = 1 + killsOf(runId, ['effect', 'model-called', 'model-answered']);
      if (effect && effect.invocations > allowed) {
        tally.duplicate(`${runId}: execute ran ${effect.invocations} times, ${allowed} allowed`);
      }
      if (effect && effect.invocations > 1) reinvoked++;
    }
    // The model reads the result once per resume that went past the model call, and no more.
    const read = finals.get(amount) ?? 0;
    const allowedReads = 1 + killsOf(runId, ['model-answered']);
    if (read > allowedReads) {
      tally.duplicate(`${runId}: the model read the tool's result ${read} times`);
    }
    if (read === 0) tally.loss(`${runId}: the model never read the tool's result`);
  }
  tally.note(
    `${kills.length} kills (${KILL_POINTS.map((p) => `${p} ${kills.filter((k) => k.point === p).length}`).join(', ')}); execute re-run after a kill past its effect: ${reinvoked} calls, each effect once by its call id`,
  );
}
