import { rmSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeLlm, type Script, startFakeLlm } from '@internal/fake-llm';
import { answer } from '@x/executive';
import { startLangGraphRun } from '@x/langgraph';
import { startAgentRun } from '@x/openai-agents';
import {
  langGraphAnswer,
  langGraphGraph,
  workerKind as langGraphWorkerKind,
} from '../frameworks/langgraph.js';
import {
  workerKind as agentsWorkerKind,
  bookingAgent,
  cityOf,
} from '../frameworks/openai-agents.js';
import {
  type Effect,
  effectsOf,
  type FrameworkName,
  finishRuns,
  type Hook,
  KILL_POINTS,
  type KillPoint,
  type OpenedPlace,
  openPlace,
  type Place,
} from '../frameworks/place.js';
import { knob, quick } from '../knobs.js';
import { exited, forkChild, nextMessage } from '../proc.js';
import type { Tally } from '../report.js';
import { createDatabase } from '../server.js';

/** Kills at each of the 5 points, per framework and storage: each kill starts a worker. */
const ROUNDS = knob('RELIABILITY_FRAMEWORK_ROUNDS', 1, 1);
/** More runs than kills, so that every killed worker finds a run that reaches its point. */
const EXTRA_RUNS = 3;

/** The model: it books the city it is asked for, then says what the tool answered. */
const booker: Script = ({ calls, userText }) => {
  const booked = calls.find((call) => call.name === 'book_trip');
  if (!booked) {
    const city = /to (\w+)/.exec(userText)?.[1] ?? 'nowhere';
    return { toolCall: { name: 'book_trip', input: { city } } };
  }
  return { text: `Your trip: ${booked.result ?? ''}` };
};

/** The suite's own runs and its finishing worker stop nowhere. */
const noHook: Hook = async () => {};

/** Every third agent run is declined, with its own reason; the others are approved. */
const declined = (n: number) => n % 3 === 2;

/** A run the suite started and answered; its number says which answers it got. */
interface Started {
  runId: string;
  n: number;
}

async function startRuns(
  framework: FrameworkName,
  opened: OpenedPlace,
  count: number,
  modelUrl: string,
): Promise<Started[]> {
  const { flow, storage, db } = opened;
  const graph = framework === 'langgraph' ? langGraphGraph(db, noHook) : undefined;
  const agent = framework === 'openai-agents' ? bookingAgent(db, noHook, modelUrl) : undefined;
  const started: Started[] = [];
  for (let n = 0; n < count; n++) {
    const runId = `${framework}-${n}`;
    const ids = { runId, conversationId: runId };
    const result = graph
      ? await startLangGraphRun(flow, { graph }, ids, {})
      : await startAgentRun(flow, ids, agent!, `Book a trip to ${cityOf(n)}`);
    if (result.status !== 'waiting') throw new Error(`${runId} did not ask: ${result.status}`);
    for (const pause of await storage.pauses().listPending(runId)) {
      const content = graph ? langGraphAnswer(runId, pause.question) : declined(n) ? `no-${n}` : '';
      const action = graph || !declined(n) ? 'accept' : 'decline';
      await answer(flow, pause.token, { action, content });
    }
    started.push({ runId, n });
  }
  return started;
}

/** The effects each run must have had, once each: by key, the value it must hold. */
function expectedEffects(framework: FrameworkName, run: Started): Map<string, string> {
  const { runId, n } = run;
  if (framework === 'langgraph') {
    const city = langGraphAnswer(runId, 'Which city?');
    const hotel = langGraphAnswer(runId, 'Which hotel?');
    return new Map([
      [`${runId}:x`, city],
      [`${runId}:y`, hotel],
      [`${runId}:join`, `${city}+${hotel}`],
    ]);
  }
  // The agent's effect is keyed by the SDK's call id: found by its city instead.
  return declined(n) ? new Map() : new Map([[cityOf(n), cityOf(n)]]);
}

/** Where a re-run of an effect is expected: the kill came after it and before the save. */
function mayRunAgain(framework: FrameworkName, points: ReadonlySet<KillPoint>): boolean {
  // LangGraph checkpoints each node: only a node cut inside runs again. The SDK keeps nothing
  // between the tool and the save, so a tool that returned runs again (deduplicated by call id).
  return points.has(3) || (framework === 'openai-agents' && points.has(4));
}

async function check(
  tally: Tally,
  framework: FrameworkName,
  opened: OpenedPlace,
  runs: Started[],
  killedAt: Map<string, Set<KillPoint>>,
  modelRead: string[],
): Promise<void> {
  const effects = await effectsOf(opened.db);
  const byRun = new Map<string, Effect[]>();
  for (const effect of effects) byRun.set(effect.run, [...(byRun.get(effect.run) ?? []), effect]);
  let again = 0;
  let completed = 0;
  for (const run of runs) {
    tally.cases++;
    const record = await opened.storage.runs().get(run.runId);
    if (record?.status !== 'completed') {
      tally.loss(`${run.runId} was answered and is ${record?.status}, not completed`);
      continue;
    }
    completed++;
    const expected = expectedEffects(framework, run);
    const own = framework === 'langgraph' ? run.runId : cityOf(run.n);
    const found = byRun.get(own) ?? [];
    const points = killedAt.get(run.runId) ?? new Set();
    for (const effect of found) {
      const key = framework === 'langgraph' ? effect.key : effect.run;
      const want = expected.get(key);
      if (want === undefined) {
        tally.duplicate(`${run.runId}: an effect ${effect.key} no answer asked for`);
        continue;
      }
      tally.check(
        effect.value === want,
        () => `${run.runId}: ${key} got "${effect.value}", its own answer is "${want}"`,
      );
      if (effect.invocations > 1) {
        again++;
        if (!mayRunAgain(framework, points)) {
          tally.duplicate(
            `${run.runId}: ${key} ran ${effect.invocations} times, killed at ${[...points].join(',') || 'no point'}`,
          );
        }
      }
    }
    const keys = new Set(found.map((e) => (framework === 'langgraph' ? e.key : e.run)));
    if (found.length > keys.size) tally.duplicate(`${run.runId}: two effects of one call`);
    for (const key of expected.keys()) {
      if (!keys.has(key)) tally.loss(`${run.runId}: no effect ${key}`);
    }
    if (framework === 'openai-agents' && declined(run.n)) {
      tally.check(
        modelRead.some((body) => body.includes(`no-${run.n}`)),
        () => `${run.runId}: the model never read the reason "no-${run.n}"`,
      );
    }
  }
  const killed = [...killedAt.values()].reduce((n, s) => n + s.size, 0);
  tally.note(
    `${killed} kills of the worker (each of the 5 points ${ROUNDS}×); ${completed} of ${runs.length} answered runs completed; ${effects.length} effects (keyed), ${again} of them run again after a kill cut them`,
  );
}

/**
 * SIGKILLs `work()` resuming real runs of one framework at each of the 5 points of a resume
 * ({@link KILL_POINTS}), ROUNDS times each, a new worker each time; then a worker in this
 * process, not killed, finishes every run. Every answered run must complete, each node or tool effect after
 * the stop must be applied once with its own answer.
 */
async function frameworkKills(
  tally: Tally,
  framework: FrameworkName,
  place: Place,
  migrated = false,
) {
  const fake: FakeLlm | undefined =
    framework === 'openai-agents' ? await startFakeLlm(booker) : undefined;
  const env = { MODEL_URL: fake?.url ?? '' };
  try {
    const opened = await openPlace(place, !migrated);
    let runs: Started[];
    try {
      runs = await startRuns(
        framework,
        opened,
        KILL_POINTS.length * ROUNDS + EXTRA_RUNS,
        env.MODEL_URL,
      );
    } finally {
      if (place.storage === 'embedded') await opened.close();
    }
    const killedAt = new Map<string, Set<KillPoint>>();
    const args = (mode: string) => [framework, JSON.stringify(place), mode];
    for (let round = 0; round < ROUNDS; round++) {
      for (const point of KILL_POINTS) {
        const worker = forkChild('framework-worker', args(String(point)), env);
        let at: { point: KillPoint; runId: string };
        try {
          at = await nextMessage<{ point: KillPoint; runId: string }>(worker);
        } catch (error) {
          tally.fail(`the worker never reached point ${point}: ${(error as Error).message}`);
          worker.kill('SIGKILL');
          await exited(worker);
          continue;
        }
        worker.kill('SIGKILL');
        await exited(worker);
        tally.faults++;
        killedAt.set(at.runId, (killedAt.get(at.runId) ?? new Set()).add(at.point));
      }
    }
    const after = place.storage === 'embedded' ? await openPlace(place, false) : opened;
    try {
      // The worker that finishes them runs here, not killed.
      const kind =
        framework === 'langgraph'
          ? langGraphWorkerKind(after.db, noHook)
          : agentsWorkerKind(after.db, noHook, env.MODEL_URL);
      await finishRuns(after, kind);
      const modelRead = (fake?.requests ?? []).map((r) => JSON.stringify(r.body));
      await check(tally, framework, after, runs, killedAt, modelRead);
    } finally {
      await after.close();
    }
  } finally {
    await fake?.close();
  }
}

/** {@link frameworkKills} on a fresh PostgreSQL database. */
function onPostgres(framework: FrameworkName) {
  return async (tally: Tally) => {
    const database = await createDatabase();
    try {
      await frameworkKills(tally, framework, { storage: 'postgres', url: database.url });
    } finally {
      await database.drop();
    }
  };
}

/** A PGlite data folder migrated once, copied for each embedded scenario (migrating takes seconds). */
let template: Promise<string> | undefined;

function migratedFolder(): Promise<string> {
  template ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'x-rel-frameworks-template-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    await (await openPlace({ storage: 'embedded', dir }, true)).close();
    return dir;
  })();
  return template;
}

/** {@link frameworkKills} on a fresh PGlite data folder (a copy of a migrated one). */
function onEmbedded(framework: FrameworkName) {
  return async (tally: Tally) => {
    // Each worker starts PGlite (seconds): the quick run leaves this storage to the full run.
    if (quick)
      return tally.skip('full run only (pnpm test:reliability): each worker starts PGlite');
    const dir = await mkdtemp(join(tmpdir(), `x-rel-${framework}-`));
    try {
      await cp(await migratedFolder(), dir, { recursive: true });
      await frameworkKills(tally, framework, { storage: 'embedded', dir }, true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}

/** The LangGraph thread kind's resume under SIGKILL, on PostgreSQL. */
export const langGraphKillsPostgres = onPostgres('langgraph');
/** The LangGraph thread kind's resume under SIGKILL, on the embedded default (PGlite). */
export const langGraphKillsEmbedded = onEmbedded('langgraph');
/** The OpenAI Agents kind's resume under SIGKILL, on PostgreSQL. */
export const agentsKillsPostgres = onPostgres('openai-agents');
/** The OpenAI Agents kind's resume under SIGKILL, on the embedded default (PGlite). */
export const agentsKillsEmbedded = onEmbedded('openai-agents');
