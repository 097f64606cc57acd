import { createTestDatabase, serverForTests } from '@internal/pg-test';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { runInProcess } from './run-cli.js';

const server = await serverForTests();

describe.skipIf(!server)('runner migrate over a run queue that drifted', () => {
  it('says how many runs it repaired, and a run left unclaimable is claimable again', async () => {
    const database = await createTestDatabase(server);
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      expect((await runInProcess(['migrate'], { env: { DATABASE_URL: database.url } })).code).toBe(
        0,
      );
      // Back to the previous version's schema, with a dead worker's run whose queue row kept
      // the time of the other of two overlapping renewals.
      await sql`delete from x_continuation.__migrations where created_at = (select max(created_at) from x_continuation.__migrations)`;
      await sql`drop view x_continuation.run_queue_drift`;
      await sql`drop function x_continuation.sync_run_queue`;
      await sql`insert into x_continuation.runs (run_id, conversation_id, status, interaction_id, attempts, lease_owner, claimable_at)
        values ('stuck', 'c', 'running', 'ask-stuck', 1, 'dead-worker', now() - interval '1 minute')`;
      await sql`insert into x_continuation.run_queue (run_id, claimable_at, leased)
        values ('stuck', now() - interval '1 minute 22 milliseconds', true)`;
      const migrated = await runInProcess(['migrate'], { env: { DATABASE_URL: database.url } });
      expect(migrated.code).toBe(0);
      expect(migrated.stdout + migrated.stderr).toContain(
        'repaired the claim order of 1 run in postgres://',
      );
      const [queued] = await sql`select count(*)::int as n from x_continuation.run_queue q
        join x_continuation.runs r on r.run_id = q.run_id and r.claimable_at = q.claimable_at`;
      expect(queued?.n).toBe(1);
      const again = await runInProcess(['migrate'], { env: { DATABASE_URL: database.url } });
      expect(again.stdout + again.stderr).not.toContain('repaired');
    } finally {
      await sql.end({ timeout: 5 });
      await database.drop();
    }
  });
});
