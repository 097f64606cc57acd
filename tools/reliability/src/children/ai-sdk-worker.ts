// The worker of the ai-sdk kill scenario: resumes ready "ai-sdk turn" runs one at a time and
// SIGKILLs itself at its kill point of the first resume that reaches it, after recording
// which run it cut (usage: ai-sdk-worker <database url> <model url> <kill point | none>).
import { AI_SDK_KIND, aiSdkKind } from '@x/ai-sdk';
import { createExecutive, type RunKind, sqlExecutiveStorage } from '@x/executive';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { KILLS_TABLE, type KillPoint, payingSettings } from '../ai-sdk-loop.js';

const [databaseUrl = '', modelUrl = '', point = 'none'] = process.argv.slice(2);
const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
const storage = sqlExecutiveStorage(drizzle({ client: sql }));
let current = '';

/** At the kill point: records the run it cuts, then dies at once, as a crash would. */
async function dieAt(at: KillPoint): Promise<void> {
  if (at !== point) return;
  await sql`insert into ${sql(KILLS_TABLE)} (run_id, point) values (${current}, ${at})`;
  process.kill(process.pid, 'SIGKILL');
}

/** The model calls, watched: the worker dies when one is sent, or once its answer is read. */
const watchedFetch: typeof fetch = async (input, init) => {
  await dieAt('model-called');
  const response = await fetch(input, init);
  const body = await response.text();
  await dieAt('model-answered');
  return new Response(body, { status: response.status, headers: response.headers });
};

const settings = payingSettings(modelUrl, sql, () => dieAt('effect'), watchedFetch);
const inner = aiSdkKind({ settings });
const kind: RunKind = {
  ...inner,
  async resume(run) {
    current = run.job.run.runId;
    await dieAt('claimed');
    const result = await inner.resume(run);
    await dieAt('written');
    return result;
  },
};
const executive = createExecutive({
  storage,
  kinds: { [AI_SDK_KIND]: kind },
  lease: { leaseMs: 2_000, retry: { maxAttempts: 1_000, baseMs: 10 } },
});
await executive.work({ once: true, concurrency: 1 });
await sql.end({ timeout: 5 });
