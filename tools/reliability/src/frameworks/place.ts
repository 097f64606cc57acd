// Where the kill scenario's runs live (scenarios/framework-kills.ts): the executive's and the
// saver's tables and a side table of the effects the runs' nodes and tools apply, in a
// PostgreSQL database or a PGlite data folder.
import { PGlite } from '@electric-sql/pglite';
import {
  createExecutive,
  type ExecutiveStorage,
  type FlowContext,
  type LeasePolicy,
  migrate as migrateExecutive,
  type RunKind,
  sqlExecutiveStorage,
} from '@x/executive';
import { sql } from 'drizzle-orm';
import { drizzle as pgliteDrizzle } from 'drizzle-orm/pglite';
import { drizzle as postgresDrizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { queryRows } from '../rows.js';

/** Which framework a run is of. */
export type FrameworkName = 'langgraph' | 'openai-agents';

/** Where the runs live: a PostgreSQL database's URL, or a PGlite data folder. */
export type Place = { storage: 'postgres'; url: string } | { storage: 'embedded'; dir: string };

/**
 * The kill points of a resume, in order: 1 claimed, before the stop is read; 2 the framework's
 * state restored, before it resumes; 3 inside the node / tool the resume runs, after its effect;
 * 4 the framework's resume returned, before its result is saved; 5 the result saved and the
 * run completed (one statement), before the worker's attempt ends.
 */
export const KILL_POINTS = [1, 2, 3, 4, 5] as const;
export type KillPoint = (typeof KILL_POINTS)[number];

/** What a node or tool does at a kill point of the worker (nothing, outside the worker). */
export type Hook = (point: KillPoint) => Promise<void>;

/** The runs' database: the executive's storage, the drizzle handle, and its close. */
export interface OpenedPlace {
  storage: ExecutiveStorage;
  flow: FlowContext;
  db: Parameters<typeof sqlExecutiveStorage>[0];
  close(): Promise<void>;
}

/**
 * Opens the database at `place`; `migrate` (the suite's first open) creates the executive's
 * and the saver's tables and the effects table, which the workers then find.
 */
export async function openPlace(place: Place, migrate: boolean): Promise<OpenedPlace> {
  let db: OpenedPlace['db'];
  let close: () => Promise<void>;
  if (place.storage === 'postgres') {
    const client = postgres(place.url, { max: 4, onnotice: () => {} });
    db = postgresDrizzle({ client });
    close = () => client.end({ timeout: 5 });
  } else {
    const pglite = new PGlite(place.dir);
    db = pgliteDrizzle({ client: pglite });
    close = () => pglite.close();
  }
  if (migrate) {
    await migrateExecutive(db);
    // Imported here: a worker of the other framework need not load LangGraph.
    await (await import('@x/langgraph')).migrate(db);
    await db.execute(sql`create table rel_effects (key text primary key, run text not null,
      value text not null, invocations int not null default 1)`);
  }
  const storage = sqlExecutiveStorage(db, { queue: { synchronousClaim: true } });
  const flow = { storage, events: { wants: () => false, record: async () => {} } };
  return { storage, flow, db, close };
}

/** One effect of a run's node or tool, keyed so that a re-run is counted, not applied again. */
export interface Effect {
  key: string;
  run: string;
  value: string;
  invocations: number;
}

/** Records an effect: applied the first time its key is seen, counted each time. */
export async function recordEffect(
  db: OpenedPlace['db'],
  effect: Omit<Effect, 'invocations'>,
): Promise<void> {
  await db.execute(sql`insert into rel_effects (key, run, value) values (${effect.key}, ${effect.run}, ${effect.value})
    on conflict (key) do update set invocations = rel_effects.invocations + 1`);
}

/** Every effect recorded. */
export async function effectsOf(db: OpenedPlace['db']): Promise<Effect[]> {
  return queryRows<Effect>(db, sql`select key, run, value, invocations from rel_effects`);
}

/** A killed worker's run is taken over once this short lease runs out; kills are no failures. */
export const KILL_LEASE: LeasePolicy = {
  leaseMs: 1_500,
  retry: { maxAttempts: 1_000, baseMs: 100 },
};

/** The runs a worker still has to resume: answered, or held by a worker (a killed one's lease). */
const PENDING = new Set(['ready', 'running']);

/**
 * Resumes runs with `kind` until none is pending (those a killed worker held, once their lease
 * ran out); throws when some still are after `withinMs`.
 */
export async function finishRuns(
  opened: OpenedPlace,
  kind: { name: string; kind: RunKind },
  withinMs = 120_000,
): Promise<void> {
  const executive = createExecutive({
    storage: opened.storage,
    kinds: { [kind.name]: kind.kind },
    lease: KILL_LEASE,
  });
  const deadline = Date.now() + withinMs;
  for (;;) {
    const runs = await opened.storage.runs().list({ limit: 1000 });
    const pending = runs.filter((r) => PENDING.has(r.status));
    if (pending.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`runs still pending after ${withinMs} ms: ${pending.map((r) => r.runId)}`);
    }
    await executive.work({ once: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
