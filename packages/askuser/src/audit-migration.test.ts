import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqlTargets } from '@internal/pg-test';
import { applyMigrations } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { pause, query } from '../test/support.js';
import { AskUserStore, exportAudit, MIGRATIONS_SCHEMA, migrate, verifyAudit } from './index.js';

const key = 'k'.repeat(32);
const drizzleFolder = fileURLToPath(new URL('../drizzle', import.meta.url));

/** The package's migrations up to `tag`, as an older release shipped them. */
function migrationsUpTo(tag: string): { folder: string; remove: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'askuser-migrations-'));
  const folder = path.join(dir, 'drizzle');
  cpSync(drizzleFolder, folder, { recursive: true });
  const journalFile = path.join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
  journal.entries = journal.entries.slice(0, journal.entries.findIndex((e) => e.tag === tag) + 1);
  writeFileSync(journalFile, JSON.stringify(journal));
  return { folder, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

for (const spec of await sqlTargets()) {
  describe.skipIf(spec.skip)(`the audit log's lighter appends (0008) on ${spec.kind}`, () => {
    it('upgrades a log written before: it still verifies, appends go on, a time range is still found', async () => {
      const target = await spec.open();
      const before = migrationsUpTo('0007_notifications');
      try {
        const { db } = target;
        // The lock key of the package's migrate(): the two never run at once.
        await applyMigrations(db, {
          folder: before.folder,
          schema: MIGRATIONS_SCHEMA,
          lockKey: 0x61736b75,
        });
        const store = new AskUserStore(db, { audit: { key } });
        await store.insert(pause('old-1', { conversationId: 'c1' }));
        await store.markResumed(
          'old-1',
          { action: 'accept', content: 'yes' },
          { answeredBy: 'ada' },
        );

        await migrate(db);

        const [heads] = await query(
          db,
          sql`select reloptions::text as options from pg_class where oid = 'aura.audit_heads'::regclass`,
        );
        expect(heads?.options).toBe('{fillfactor=50}');
        const [index] = await query(
          db,
          sql`select am.amname from pg_class c join pg_am am on am.oid = c.relam
            where c.oid = 'aura.audit_entries_at_idx'::regclass`,
        );
        expect(index?.amname).toBe('brin');
        await store.insert(pause('new-1', { conversationId: 'c1' }));
        await store.insert(pause('new-2', { conversationId: 'c2' }));
        await store.markResumed('new-1', { action: 'decline', content: '' }, { answeredBy: 'bob' });
        expect(await verifyAudit(db, { key })).toMatchObject({ ok: true, entries: 5, chains: 2 });
        const since: string[] = [];
        for await (const e of exportAudit(db, { since: new Date(Date.now() - 60_000) })) {
          since.push(`${e.chain} ${e.seq}`);
        }
        expect(since).toEqual([
          'conversation:c1 1',
          'conversation:c1 2',
          'conversation:c1 3',
          'conversation:c2 1',
          'conversation:c1 4',
        ]);
        // The range appended to is left unsummarized: the appends since did not
        // rewrite its summary.
        const [summarized] = await query(
          db,
          sql`select brin_summarize_range('aura.audit_entries_at_idx'::regclass, 0)::int as n`,
        );
        expect(summarized?.n).toBe(1);
      } finally {
        before.remove();
        await target.close();
      }
    });
  });
}
