import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqlTargets } from '@internal/pg-test';
import { migrate as migrateAskUser, NotificationOutbox } from '@x/askuser';
import { migrate as migrateExecutive, PostgresGatedResults } from '@x/executive';
import { postgresSlackMessageStore, useDecisionLink } from '@x/notify';
import { applyMigrations, rowsOf } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { migrateAll } from '../src/storage/index.js';

const drizzleFolder = fileURLToPath(new URL('../drizzle', import.meta.url));

/** The runner's migrations as they were before the outbox moved: up to 0003. */
function foldersUpTo(tag: string): { folder: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'runner-migrations-'));
  const folder = path.join(dir, 'drizzle');
  cpSync(drizzleFolder, folder, { recursive: true });
  const journalFile = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
  const last = journal.entries.findIndex((e) => e.tag === tag);
  journal.entries = journal.entries.slice(0, last + 1);
  writeFileSync(journalFile, JSON.stringify(journal));
  return { folder, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

for (const spec of await sqlTargets()) {
  describe.skipIf(spec.skip)(`the outbox moved to @x/askuser on ${spec.kind}`, () => {
    it("moves runner.notifications' rows into aura.notifications and drops the old table", async () => {
      const target = await spec.open();
      const before = foldersUpTo('0003_notifications');
      try {
        const { db } = target;
        await migrateAskUser(db);
        await applyMigrations(db, { folder: before.folder, schema: 'x_runner', lockKey: 1 });
        await db.execute(sql`insert into runner.notifications
          (id, event_id, kind, channel, payload, status, attempts, last_error, created_at)
          values ('old-1', 'evt_1', 'question.created', 'webhook', '{"data":{"token":"t1"}}', 'failed', 8, 'HTTP 503', now() - interval '2 hours'),
                 ('old-2', 'evt_2', 'run.completed', 'email', '{"data":{}}', 'pending', 0, null, now() - interval '1 hour')`);

        // The runner's later migrations need the packages' tables, as migrateAll orders them.
        await migrateAll(db);

        const outbox = new NotificationOutbox(db);
        expect(
          (await outbox.list()).map((n) => [n.id, n.eventId, n.channel, n.status, n.attempts]),
        ).toEqual([
          ['old-2', 'evt_2', 'email', 'pending', 0],
          ['old-1', 'evt_1', 'webhook', 'failed', 8],
        ]);
        expect((await outbox.get('old-1'))?.lastError).toBe('HTTP 503');
        expect((await outbox.claimDue(10, 60_000)).map((n) => n.id)).toEqual(['old-2']);
        const left = rowsOf(
          await db.execute(sql`select to_regclass('runner.notifications')::text as t`),
        );
        expect(left).toEqual([{ t: null }]);
      } finally {
        before.remove();
        await target.close();
      }
    });
  });

  describe.skipIf(spec.skip)(`the gated results moved to @x/executive on ${spec.kind}`, () => {
    it("copies runner.gated_results' rows into x_executive.gated_results and drops the old table", async () => {
      const target = await spec.open();
      const before = foldersUpTo('0005_slack_messages');
      try {
        const { db } = target;
        await migrateAskUser(db);
        await applyMigrations(db, { folder: before.folder, schema: 'x_runner', lockKey: 1 });
        await db.execute(sql`insert into runner.gated_results (token, tool, arguments, edited, result)
          values ('t1', 'transfer_funds', '{"amount":40}', true, 'transferred 40')`);

        await migrateAll(db);

        expect(await new PostgresGatedResults(db).result('t1')).toEqual({
          token: 't1',
          tool: 'transfer_funds',
          arguments: { amount: 40 },
          edited: true,
          result: 'transferred 40',
        });
        const left = rowsOf(
          await db.execute(sql`select to_regclass('runner.gated_results')::text as t`),
        );
        expect(left).toEqual([{ t: null }]);
      } finally {
        before.remove();
        await target.close();
      }
    });
  });

  describe.skipIf(spec.skip)(
    `the decision links and Slack messages moved to @x/notify on ${spec.kind}`,
    () => {
      it('copies runner.decision_links and runner.slack_messages into x_notify and drops them', async () => {
        const target = await spec.open();
        const before = foldersUpTo('0006_gated_results_to_executive');
        try {
          const { db } = target;
          // The previous version's migrations up to 0006 copy into the executive's table.
          await migrateExecutive(db);
          await applyMigrations(db, { folder: before.folder, schema: 'x_runner', lockKey: 1 });
          await db.execute(
            sql`insert into runner.decision_links (id, token) values ('link-used-before-move', 't1')`,
          );
          await db.execute(
            sql`insert into runner.slack_messages (token, channel, ts) values ('t1', 'C1', '1.5')`,
          );

          await migrateAll(db);

          const used = await useDecisionLink(db, 'link-used-before-move', 't1').catch(
            (e: unknown) => e,
          );
          expect(used).toMatchObject({ name: 'NotifyError', code: 'used_link' });
          expect(await postgresSlackMessageStore(db).find('t1')).toEqual({
            channel: 'C1',
            ts: '1.5',
          });
          const left = rowsOf(
            await db.execute(
              sql`select to_regclass('runner.decision_links')::text as links, to_regclass('runner.slack_messages')::text as slack`,
            ),
          );
          expect(left).toEqual([{ links: null, slack: null }]);
        } finally {
          before.remove();
          await target.close();
        }
      });
    },
  );
}
