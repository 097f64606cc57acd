import { createTestDatabase, serverForTests } from '@internal/pg-test';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { runInProcess } from './run-cli.js';

const server = await serverForTests();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

// An answer that came before the deadline while a worker held the run (claimed at its due
// time) could not ready it: the next claim applies the answer, and wake must say so.
describe.skipIf(!server)('wake: an answer that won the deadline is reported as applied', () => {
  it('its claim, its resumed event and its text line say the answer, not expired', async () => {
    const database = await createTestDatabase(server);
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    const env = { DATABASE_URL: database.url, RUNNER_DEADLINE: 'ask_user=10s:decline' };
    try {
      const exec = await runInProcess(['exec', 'Plan a trip', '--conversation', 'won', '--json'], {
        env,
      });
      expect(exec.code, exec.stderr).toBe(0);
      const token = exec.events.find((e) => e.type === 'run-waiting')?.token as string;
      // A worker claimed the run at its due time and is gone; its lease ends after the deadline.
      const [held] = await sql<[{ claimable_at: Date }]>`update x_continuation.runs
        set status = 'running', lease_owner = 'a-gone-worker', attempts = 1,
            claimable_at = deadline_at + interval '1 second'
        where interaction_id = ${token} returning claimable_at`;
      await sql`update x_continuation.run_queue q set claimable_at = r.claimable_at, leased = true
        from x_continuation.runs r where q.run_id = r.run_id and r.interaction_id = ${token}`;
      const answered = await runInProcess(['answer', token, '--accept', 'April'], { env });
      expect(answered.code, answered.stderr).toBe(0);
      await sleep(held.claimable_at.getTime() - Date.now() + 300);

      // One log line per event, with its text: what scripts and people are told.
      const woke = await runInProcess(['wake', '--once', '--log-format', 'json'], { env });
      expect(woke.code, woke.stderr).toBe(0);
      const lines = woke.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const about = lines.filter((line) => line.token === token);
      expect(about.find((line) => line.event === 'run-claimed')).toMatchObject({
        action: 'accept',
        msg: expect.stringContaining(`resumed ${token} (accept "April")`),
      });
      expect(about.find((line) => line.event === 'resumed')).toMatchObject({
        action: 'accept',
        status: 'waiting',
      });
      expect(woke.stdout).not.toContain('passed');
    } finally {
      await sql.end({ timeout: 5 });
      await database.drop();
    }
  }, 120_000);
});
