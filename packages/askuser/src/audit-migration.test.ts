import { sqlTargets } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { answerAsBefore, insertAsBefore, migrateUpTo, pause, query } from '../test/support.js';
import { AskUserStore, exportAudit, migrate, verifyAudit } from './index.js';

const key = 'k'.repeat(32);

for (const spec of await sqlTargets()) {
  describe.skipIf(spec.skip)(`the audit log's lighter appends (0008) on ${spec.kind}`, () => {
    it('upgrades a log written before: it still verifies, appends go on, a time range is still found', async () => {
      const target = await spec.open();
      try {
        const { db } = target;
        await migrateUpTo(db, '0007_notifications');
        await insertAsBefore(db, key, { token: 'old-1', conversationId: 'c1' });
        await answerAsBefore(db, key, 'old-1', { action: 'accept', content: 'yes' }, 'ada');

        await migrate(db);
        const store = new AskUserStore(db, { audit: { key } });

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
        await target.close();
      }
    });
  });
}
