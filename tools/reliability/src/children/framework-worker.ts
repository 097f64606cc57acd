// The worker of the framework kill scenario: `createExecutive().work()` resuming the runs of one
// framework's kind. It tells the suite when it reaches its kill point (on whichever run gets
// there first) and waits there to be SIGKILLed.
// Usage: framework-worker <langgraph | openai-agents> <place as JSON> <1..5>
// (the OpenAI model server's URL in MODEL_URL)
import type { PostgresRunQueue } from '@x/continuation-postgres';
import { createExecutive, type ExecutiveStorage } from '@x/executive';
import {
  type FrameworkName,
  KILL_LEASE,
  type KillPoint,
  openPlace,
  type Place,
} from '../frameworks/place.js';

const [framework, placeJson, mode] = process.argv.slice(2) as [FrameworkName, string, string];
const killAt = Number(mode) as KillPoint;
const opened = await openPlace(JSON.parse(placeJson) as Place, false);

/** The run this worker resumes now (one at a time). */
let current: string | undefined;

/** At the kill point: says so (and on which run), then waits there for the SIGKILL. */
async function hook(point: KillPoint): Promise<void> {
  if (point !== killAt) return;
  process.send?.({ point, runId: current });
  await new Promise(() => {});
}

/** The worker's queue, with points 1 (claimed), 4 (before the result is saved) and 5 (after). */
function hookedQueue(queue: PostgresRunQueue): PostgresRunQueue {
  return new Proxy(queue, {
    get(target, property) {
      if (property === 'claim') {
        return async (...args: Parameters<PostgresRunQueue['claim']>) => {
          const claimed = await target.claim(...args);
          current = claimed?.run.runId;
          if (claimed) await hook(1);
          return claimed;
        };
      }
      if (property === 'complete') {
        return async (...args: Parameters<PostgresRunQueue['complete']>) => {
          await hook(4);
          const completed = await target.complete(...args);
          await hook(5);
          return completed;
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const storage: ExecutiveStorage = {
  ...opened.storage,
  runs: (tx) => (tx ? opened.storage.runs(tx) : hookedQueue(opened.storage.runs())),
};

// Only the framework of the runs is loaded: a worker's start is most of a kill's cost.
const { name, kind } =
  framework === 'openai-agents'
    ? (await import('../frameworks/openai-agents.js')).workerKind(
        opened.db,
        hook,
        process.env.MODEL_URL ?? '',
      )
    : (await import('../frameworks/langgraph.js')).workerKind(opened.db, hook);

await createExecutive({ storage, kinds: { [name]: kind }, lease: KILL_LEASE }).work({
  pollMs: 100,
});
