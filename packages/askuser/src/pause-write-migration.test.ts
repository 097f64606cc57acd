import { sqlTargets } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  answerAsBefore,
  insertAsBefore,
  listenOnce,
  migrateUpTo,
  pause,
  query,
} from '../test/support.js';
import { ASKUSER_CREATED_CHANNEL, AskUserStore, migrate, verifyAudit } from './index.js';

const key = 'k'.repeat(32);
const yes = { action: 'accept', content: 'yes' } as const;

for (const spec of await sqlTargets()) {
  describe.skipIf(spec.skip)(`the pause's lighter writes (0009) on ${spec.kind}`, () => {
    it('upgrades questions written before: they list, answer and verify, and older writers stay correct', async () => {
      const target = await spec.open();
      try {
        const { db } = target;
        const keys = async () =>
          (
            await query(
              db,
              sql`select token || ' ' || audience_key as k from aura.pending_audience order by 1`,
            )
          ).map((r) => r.k);
        await migrateUpTo(db, '0008_audit_write_cost');
        await insertAsBefore(db, key, { token: 'q1-open', conversationId: 'c1' });
        await insertAsBefore(db, key, { token: 'q2-ops', conversationId: 'c1', roles: ['ops'] });
        await insertAsBefore(db, key, { token: 'q3-ada', conversationId: 'c2', names: ['ada'] });
        await insertAsBefore(db, key, { token: 'q4-done', conversationId: 'c2' });
        await answerAsBefore(db, key, 'q4-done', yes, 'bob');
        expect(await keys()).toEqual(['q1-open *', 'q2-ops role:ops', 'q3-ada name:ada']);

        await migrate(db);

        expect(await keys()).toEqual(['q2-ops role:ops', 'q3-ada name:ada']);
        const store = new AskUserStore(db, { audit: { key } });
        const tokens = (pauses: { token: string }[]) => pauses.map((p) => p.token);
        expect(tokens(await store.listPendingAll())).toEqual(['q1-open', 'q2-ops', 'q3-ada']);
        expect(tokens(await store.listAnswerable({ name: 'bob', roles: ['ops'] }))).toEqual([
          'q1-open',
          'q2-ops',
        ]);
        expect(tokens(await store.listAnswerable({ name: 'ada' }))).toEqual(['q1-open', 'q3-ada']);
        await store.markResumed('q1-open', yes, { identity: { name: 'bob' } });
        await store.markResumed('q2-ops', yes, { identity: { name: 'bob', roles: ['ops'] } });
        expect(await keys()).toEqual(['q3-ada name:ada']);
        expect(tokens(await store.listAnswered({ conversationId: 'c2' }))).toEqual(['q4-done']);

        // A writer that leaves the work to the triggers (an older release, direct SQL).
        const created = await listenOnce(target, ASKUSER_CREATED_CHANNEL, (p) => p === 'q5-old');
        try {
          await insertAsBefore(db, key, { token: 'q5-old', conversationId: 'c3', roles: ['ops'] });
          expect(await created.received).toBe('q5-old');
        } finally {
          await created.stop();
        }
        await insertAsBefore(db, key, { token: 'q6-old', conversationId: 'c3' });
        expect(await keys()).toEqual(['q3-ada name:ada', 'q5-old role:ops']);
        expect(tokens(await store.listAnswerable({ name: 'cy', roles: ['ops'] }))).toEqual([
          'q5-old',
          'q6-old',
        ]);
        await answerAsBefore(db, key, 'q5-old', yes, 'cy');
        expect(await keys()).toEqual(['q3-ada name:ada']);
        expect(await verifyAudit(db, { key })).toMatchObject({ ok: true, problems: [] });
      } finally {
        await target.close();
      }
    }, 120_000);

    it("marks only its own row: another writer's row in the same transaction keeps its triggers", async () => {
      const target = await spec.open();
      try {
        const { db } = target;
        await migrate(db);
        await db.transaction(async (tx) => {
          await new AskUserStore(tx).insert(pause('m1', { audience: { names: ['ada'] } }));
          await insertAsBefore(tx, undefined, { token: 'm2', conversationId: 'c', names: ['ada'] });
          await new AskUserStore(tx).markResumed('m1', yes);
          await answerAsBefore(tx, undefined, 'm2', yes, 'ada');
          await insertAsBefore(tx, undefined, { token: 'm3', conversationId: 'c', names: ['ada'] });
        });
        const rows = await query(db, sql`select token from aura.pending_audience order by token`);
        expect(rows).toEqual([{ token: 'm3' }]);
      } finally {
        await target.close();
      }
    });
  });
}
