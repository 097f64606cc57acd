import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { applyMigrations, rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContinuationDatabase, migrate, PostgresRunQueue } from './index.js';

const LEASE = 60_000;
const drizzleFolder = fileURLToPath(new URL('../drizzle', import.meta.url));

/** A copy of the package's migrations up to `last` (a tag), as an older release shipped them. */
function migrationsUpTo(last: string): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'x-continuation-migrations-'));
  const journal = JSON.parse(readFileSync(path.join(drizzleFolder, 'meta/_journal.json'), 'utf8'));
  const upTo = journal.entries.findIndex((e: { tag: string }) => e.tag === last);
  journal.entries = journal.entries.slice(0, upTo + 1);
  mkdirSync(path.join(folder, 'meta'));
  writeFileSync(path.join(folder, 'meta/_journal.json'), JSON.stringify(journal));
  for (const { tag } of journal.entries) {
    copyFileSync(path.join(drizzleFolder, `${tag}.sql`), path.join(folder, `${tag}.sql`));
  }
  return folder;
}

for (const t of await sqlTargets()) {
  describe.skipIf(t.skip)(`migration 0004_run_queue over the runs of 0003 (${t.kind})`, () => {
    let target: SqlTarget;
    let db: ContinuationDatabase;
    let folder: string;
    beforeAll(async () => {
      target = await t.open();
      db = target.db;
      folder = migrationsUpTo('0003_run_deadline');
      await applyMigrations(db, { folder, schema: 'x_continuation', lockKey: 0x636f6e74 });
      // Runs as the previous release left them: every status, due or not.
      await db.execute(sql`
        insert into x_continuation.runs (run_id, conversation_id, status, interaction_id, input, attempts, lease_owner, due_at, deadline_at, last_error, finished_at)
        values
          ('waiting', 'c', 'waiting', 'ask-waiting', null, 0, null, null, null, null, null),
          ('deadline', 'c', 'waiting', 'ask-deadline', null, 0, null, now() - interval '1 minute', now() - interval '1 minute', null, null),
          ('ready', 'c', 'ready', 'ask-ready', '{"content":"yes"}', 0, null, now() - interval '2 minutes', null, null, null),
          ('expired', 'c', 'running', 'ask-expired', '{"content":"yes"}', 1, 'gone-worker', now() - interval '3 minutes', null, null, null),
          ('leased', 'c', 'running', 'ask-leased', '{"content":"yes"}', 1, 'live-worker', now() + interval '1 hour', null, null, null),
          ('failed', 'c', 'failed', 'ask-failed', null, 3, 'w', null, null, 'boom', now()),
          ('completed', 'c', 'completed', 'ask-completed', null, 1, 'w', null, null, null, now())`);
      await migrate(db);
    });
    afterAll(async () => {
      rmSync(folder, { recursive: true, force: true });
      await target?.close();
    });

    it('keeps every run; the due ones are claimed in due order, the leased one stays leased', async () => {
      const queue = new PostgresRunQueue(db);
      expect((await queue.list({ limit: 10 })).map((r) => r.runId).sort()).toEqual(
        ['completed', 'deadline', 'expired', 'failed', 'leased', 'ready', 'waiting'].sort(),
      );
      expect(await queue.leases()).toEqual([
        expect.objectContaining({ runId: 'expired', owner: 'gone-worker', holder: 'unknown' }),
        expect.objectContaining({ runId: 'leased', owner: 'live-worker', holder: 'unknown' }),
      ]);
      const claims: string[] = [];
      for (let i = 0; i < 4; i++) {
        const claimed = await queue.claim({ owner: `new-${i}`, leaseMs: LEASE });
        if (claimed) claims.push(claimed.run.runId);
      }
      expect(claims).toEqual(['expired', 'ready', 'deadline']);
      expect(await queue.get('expired')).toMatchObject({ attempts: 2, lostAttempts: 1 });
      expect((await queue.list({ status: 'failed' })).map((r) => r.runId)).toEqual(['failed']);
      expect((await queue.retry('failed')).status).toBe('ready');
      expect((await queue.claim({ owner: 'new-f', leaseMs: LEASE }))?.run.runId).toBe('failed');
      expect(await queue.markReady('ask-waiting', { content: 'ok' })).toMatchObject({
        runId: 'waiting',
        status: 'ready',
      });
      expect((await queue.claim({ owner: 'new-w', leaseMs: LEASE }))?.run.runId).toBe('waiting');
    });

    it("a statement of the previous release fails loudly: it names the due time it can't find", async () => {
      const error = await db
        .execute(
          sql`update x_continuation.runs set status = 'ready', due_at = now() where run_id = 'x'`,
        )
        .catch((e: unknown) => e);
      const code = (error as { cause?: { code?: string }; code?: string }).cause?.code;
      expect(code ?? (error as { code?: string }).code).toBe('42703');
      const [row] = rowsOf(
        await db.execute(sql`select count(*)::int as n from x_continuation.run_queue`),
      );
      expect(row?.n, 'the queue rows of the running runs').toBeGreaterThan(0);
    });
  });
}

for (const t of await sqlTargets()) {
  describe.skipIf(t.skip)(
    `migration 0005_run_queue_repair over a drifted queue (${t.kind})`,
    () => {
      let target: SqlTarget;
      let db: ContinuationDatabase;
      let folder: string;
      let repairedRuns: number;
      beforeAll(async () => {
        target = await t.open();
        db = target.db;
        folder = migrationsUpTo('0004_run_queue');
        await applyMigrations(db, { folder, schema: 'x_continuation', lockKey: 0x636f6e74 });
        // As overlapping writes of 0004's statements left them (issue 53): a dead worker's run
        // whose queue row kept the other renewal's time, an answered run whose queue row kept
        // its lease, a completed run's queue row left behind; and two runs in step.
        await db.execute(sql`
        insert into x_continuation.runs (run_id, conversation_id, status, interaction_id, input, attempts, lease_owner, claimable_at, finished_at)
        values
          ('dead', 'c', 'running', 'ask-dead', '{"content":"yes"}', 1, 'dead-worker', now() - interval '1 minute', null),
          ('answered', 'c', 'ready', 'ask-answered', '{"content":"ok"}', 0, null, now() - interval '2 minutes', null),
          ('completed', 'c', 'completed', 'ask-completed', null, 1, 'w', null, now()),
          ('in-step', 'c', 'ready', 'ask-in-step', '{"content":"a"}', 0, null, now() - interval '3 minutes', null),
          ('waiting', 'c', 'waiting', 'ask-waiting', null, 0, null, null, null)`);
        await db.execute(sql`
        insert into x_continuation.run_queue (run_id, claimable_at, leased)
        select run_id, claimable_at - interval '22 milliseconds', true from x_continuation.runs where run_id = 'dead'
        union all select run_id, claimable_at + interval '1 second', true from x_continuation.runs where run_id = 'answered'
        union all select 'completed', now() - interval '1 hour', true
        union all select run_id, claimable_at, false from x_continuation.runs where run_id = 'in-step'`);
        ({ repairedRuns } = await migrate(db));
      });
      afterAll(async () => {
        rmSync(folder, { recursive: true, force: true });
        await target?.close();
      });

      it('says how many runs it repaired, and leaves the queue in step with its runs', async () => {
        expect(repairedRuns).toBe(3);
        expect(await new PostgresRunQueue(db).queueDrift()).toEqual([]);
        expect(await migrate(db)).toEqual({ repairedRuns: 0 });
      });

      it('the stuck runs are claimed again: the dead worker’s, the answered one', async () => {
        const queue = new PostgresRunQueue(db);
        const claims: string[] = [];
        for (let i = 0; i < 4; i++) {
          const claimed = await queue.claim({ owner: `new-${i}`, leaseMs: LEASE });
          if (claimed) claims.push(claimed.run.runId);
        }
        expect(claims).toEqual(['in-step', 'answered', 'dead']);
        expect(await queue.get('dead')).toMatchObject({ attempts: 2, lostAttempts: 1 });
      });
    },
  );
}
