import { createTestDatabase, serverProblem, testServerUrl } from '@internal/pg-test';
import postgres from 'postgres';

/** The server the suite uses: `TEST_DATABASE_URL`, else the local default. */
export const serverUrl = testServerUrl;

/** Why the server cannot be used, or undefined when it answers. */
export const probe = serverProblem;

/** A database of this run's own: `x_rel_<random>`, dropped at the end. */
export interface RunDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** Creates `x_rel_<pid>_<random>` on the server; its drop checks the run queue's invariant first. */
export async function createDatabase(server = serverUrl()): Promise<RunDatabase> {
  const database = await createTestDatabase(server, 'x_rel');
  return {
    ...database,
    async drop() {
      try {
        await checkRunQueue(database.url);
      } finally {
        await database.drop();
      }
    },
  };
}

/** What the run queue's invariant found in the databases dropped since the last `takeQueueChecks`. */
const queueChecks = { databases: 0, drifted: [] as string[] };

/**
 * Every run with a `claimable_at` has exactly one queue row at that time and lease, and no queue
 * row is without its run: `x_continuation.run_queue_drift` lists the runs that break it.
 */
async function checkRunQueue(url: string): Promise<void> {
  const sql = client(url, 1);
  try {
    const [view] =
      await sql`select to_regclass('x_continuation.run_queue_drift') is not null as present`;
    if (!view?.present) return;
    const rows =
      await sql`select run_id, claimable_at, queued_at from x_continuation.run_queue_drift`;
    queueChecks.databases++;
    for (const row of rows) {
      queueChecks.drifted.push(
        `run queue drift: run ${row.run_id} is claimable at ${row.claimable_at?.toISOString?.() ?? 'never'} but queued at ${JSON.stringify(row.queued_at)}`,
      );
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** The run queue checks since the last call: how many databases, and each drifted run. */
export function takeQueueChecks(): { databases: number; drifted: string[] } {
  const taken = { databases: queueChecks.databases, drifted: queueChecks.drifted.splice(0) };
  queueChecks.databases = 0;
  return taken;
}

/** A small postgres.js client for checks and fault injection. */
export function client(url: string, max = 4): postgres.Sql {
  return postgres(url, { max, onnotice: () => {} });
}
