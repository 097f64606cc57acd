import { sqlTargets } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  answerAsBefore,
  appendAsBefore,
  insertAsBefore,
  migrateUpTo,
  pause,
  query,
} from '../test/support.js';
import {
  AskUserStore,
  appendAuditEvent,
  exportAudit,
  migrate,
  sealAudit,
  verifyAudit,
} from './index.js';

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
    }, 120_000);
  });

  describe.skipIf(spec.skip)(`an audit append in one statement (0010) on ${spec.kind}`, () => {
    it('upgrades a log written before: heads follow, it verifies, and older appends still move the head', async () => {
      const target = await spec.open();
      try {
        const { db } = target;
        const heads = async () =>
          (
            await query(
              db,
              sql`select h.chain || ' ' || h.seq || ' ' || (h.hash = e.hash) as h from aura.audit_heads h
                join aura.audit_entries e on e.chain = h.chain and e.seq = h.seq order by h.chain`,
            )
          ).map((r) => r.h);
        await migrateUpTo(db, '0009_pause_write_cost');
        await insertAsBefore(db, key, { token: 'old-1', conversationId: 'c1' });
        await answerAsBefore(db, key, 'old-1', { action: 'accept', content: 'yes' }, 'ada');
        expect(await heads()).toEqual(['conversation:c1 2 true']);

        await migrate(db);
        const store = new AskUserStore(db, { audit: { key } });
        await store.insert(pause('new-1', { conversationId: 'c1' }));
        await store.markResumed('new-1', { action: 'decline', content: '' }, { answeredBy: 'bob' });
        await store.insert(pause('new-2', { conversationId: 'c2' }));
        // The statement moves the head and the trigger skips the entry: one update, not two.
        const moves = await db.transaction(async (tx) => {
          const updates = async () =>
            Number(
              (
                await query(
                  tx,
                  sql`select n_tup_upd::int as n from pg_stat_xact_user_tables where relid = 'aura.audit_heads'::regclass`,
                )
              )[0]?.n,
            );
          const before = await updates();
          await appendAuditEvent(tx, { operator: 'cy', added: true }, { key });
          return (await updates()) - before;
        });
        expect(moves).toBe(1);
        expect(await heads()).toEqual([
          'app 1 true',
          'conversation:c1 4 true',
          'conversation:c2 1 true',
        ]);
        await db.transaction((tx) =>
          appendAsBefore(tx, key, { chain: 'app', kind: 'app-event', data: { operator: 'dee' } }),
        );
        await sealAudit(db, { key });
        expect(await heads()).toEqual([
          'app 2 true',
          'conversation:c1 4 true',
          'conversation:c2 1 true',
          'global 1 true',
        ]);
        expect(await verifyAudit(db, { key })).toMatchObject({ ok: true, problems: [] });
      } finally {
        await target.close();
      }
    });
  });
}
