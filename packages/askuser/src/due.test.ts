import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { describeOnEachStorage, emptyAll, pause } from '../test/support.js';
import { type AuditEntry, exportAudit, verifyAudit } from './index.js';

const key = 'r'.repeat(32);
const past = () => new Date(Date.now() - 60_000);

await describeOnEachStorage(
  'reminders and escalation',
  (s) => {
    it('each is applied once, when due; the next due time is the earliest left', async () => {
      const deadline = new Date(Date.now() + 3_600_000);
      await s.store.insert(
        pause('r1', {
          audience: { names: [], roles: ['ops'] },
          remind: { at: past() },
          escalate: { inMs: 3_000_000, roles: ['lead'], names: ['ada'] },
          deadline: { at: deadline, answer: { action: 'decline', content: '' } },
        }),
      );
      const pending = await s.store.getByToken('r1');
      expect(pending.reminder?.remindedAt).toBeNull();
      expect(pending.escalation).toMatchObject({
        names: ['ada'],
        roles: ['lead'],
        escalatedAt: null,
      });
      const first = await s.store.applyDue('r1');
      expect(first).toMatchObject({ reminded: true, escalated: null, pending: true });
      expect(first.nextAt?.getTime()).toBeLessThan(deadline.getTime());
      // Again (another worker, after a restart): nothing more is applied.
      const again = await Promise.all([s.store.applyDue('r1'), s.store.applyDue('r1')]);
      expect(again.map((o) => o.reminded)).toEqual([false, false]);
      expect((await s.store.listAnswerable({ name: 'ada' })).map((p) => p.token)).toEqual([]);

      await s.target.db.execute(
        sql`update aura.paused_states set escalate_at = now() - interval '1 second' where token = 'r1'`,
      );
      const escalated = await Promise.all([s.store.applyDue('r1'), s.store.applyDue('r1')]);
      expect(escalated.filter((o) => o.escalated !== null)).toEqual([
        expect.objectContaining({ escalated: { names: ['ada'], roles: ['lead'] } }),
      ]);
      expect(escalated[0]?.nextAt).toEqual(deadline);
      const widened = await s.store.getByToken('r1');
      expect(widened.audience).toEqual({ names: ['ada'], roles: ['lead', 'ops'] });
      expect(widened.reminder?.remindedAt).toBeInstanceOf(Date);
      expect(widened.escalation?.escalatedAt).toBeInstanceOf(Date);
      // The widened audience answers, and lists it, as any other.
      expect((await s.store.listAnswerable({ name: 'ada' })).map((p) => p.token)).toEqual(['r1']);
      expect((await s.store.listAnswerable({ name: 'x', roles: ['lead'] })).length).toBe(1);
      await s.store.markResumed(
        'r1',
        { action: 'accept', content: 'ok' },
        { identity: { name: 'ada' } },
      );
      expect(await s.store.applyDue('r1')).toEqual({
        reminded: false,
        escalated: null,
        pending: false,
        nextAt: null,
      });

      const entries: AuditEntry[] = [];
      for await (const e of exportAudit(s.target.db)) entries.push(e);
      expect(entries.map((e) => e.kind)).toEqual([
        'question-created',
        'question-reminded',
        'question-escalated',
        'question-answered',
      ]);
      expect((await verifyAudit(s.target.db, { key })).ok).toBe(true);
    });

    it('an escalation leaves an audience of anyone as it is', async () => {
      await s.store.insert(pause('r2', { escalate: { at: past(), roles: ['lead'] } }));
      expect((await s.store.applyDue('r2')).escalated).toEqual({ names: [], roles: ['lead'] });
      expect((await s.store.getByToken('r2')).audience).toEqual({ names: [], roles: [] });
      expect((await s.store.listAnswerable({ name: 'anyone' })).length).toBe(1);
    });
  },
  { audit: { key }, empty: emptyAll },
);
