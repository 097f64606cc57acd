import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { describeOnEachStorage, pause } from '../test/support.js';
import { AskUserError, AskUserStore, type NewNotification, NotificationOutbox } from './index.js';

const note = (eventId: string, channel = 'webhook'): NewNotification => ({
  eventId,
  kind: 'question.created',
  channel,
  payload: { type: 'question.created', data: { token: eventId } },
});

await describeOnEachStorage(
  'the notification outbox',
  (s) => {
    const outbox = () => new NotificationOutbox(s.target.db);

    it("is written in its event's transaction: a rolled-back question sends nothing, a saved one its notifications", async () => {
      await expect(
        s.target.db.transaction(async (tx) => {
          await new AskUserStore(tx).insert(pause('gone'));
          await new NotificationOutbox(tx).enqueue([note('evt-gone')]);
          throw new Error('the event fails after its notification was written');
        }),
      ).rejects.toThrow('the event fails');
      expect(await outbox().list()).toEqual([]);

      await s.target.db.transaction(async (tx) => {
        await new AskUserStore(tx).insert(pause('kept'));
        await new NotificationOutbox(tx).enqueue([note('evt-kept'), note('evt-kept', 'email')]);
      });
      const listed = await outbox().list();
      expect(listed.map((n) => [n.eventId, n.channel, n.status, n.attempts])).toEqual([
        ['evt-kept', 'email', 'pending', 0],
        ['evt-kept', 'webhook', 'pending', 0],
      ]);
      expect(listed[0]?.payload).toEqual(note('evt-kept').payload);
    });

    it('keeps an event once per channel: enqueued again, it is skipped', async () => {
      await outbox().enqueue([note('evt-1')]);
      await outbox().enqueue([note('evt-1'), note('evt-1', 'slack')]);
      expect((await outbox().list()).map((n) => n.channel).sort()).toEqual(['slack', 'webhook']);
    });

    it('refuses a malformed notification with invalid_argument and writes none of the batch', async () => {
      const bad = { ...note('evt-bad'), channel: '' };
      const refused = await outbox()
        .enqueue([note('evt-ok'), bad])
        .catch((e: unknown) => e);
      expect(AskUserError.hasCode(refused, 'invalid_argument')).toBe(true);
      expect(await outbox().list()).toEqual([]);
    });

    it('a claim counts an attempt and leases the rows: no other claim takes them until the lease runs out', async () => {
      await outbox().enqueue(['a', 'b', 'c', 'd', 'e'].map((e) => note(e)));
      const claims = await Promise.all([1, 2, 3].map(() => outbox().claimDue(2, 60_000)));
      const ids = claims.flat().map((n) => n.eventId);
      expect(ids.sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(claims.flat().every((n) => n.attempts === 1)).toBe(true);
      expect(await outbox().claimDue(10, 60_000)).toEqual([]);
      expect((await outbox().nextDue())?.getTime()).toBeGreaterThan(Date.now() + 30_000);

      // The deliverer died: its lease runs out, and the rows are due again.
      await s.target.db.execute(
        sql`update aura.notifications set next_at = now() - interval '1 second' where event_id in ('a', 'b')`,
      );
      const again = await outbox().claimDue(10, 60_000);
      expect(again.map((n) => [n.eventId, n.attempts]).sort()).toEqual([
        ['a', 2],
        ['b', 2],
      ]);
    });

    it('a claim skips rows another transaction has locked', async () => {
      await outbox().enqueue([note('locked'), note('free')]);
      if (s.kind !== 'postgres') return; // PGlite has one connection: nothing runs beside a transaction.
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => {
        locked = r;
      });
      const holder = s.target.db.transaction(async (tx) => {
        await tx.execute(
          sql`select 1 from aura.notifications where event_id = 'locked' for update`,
        );
        locked();
        await held;
      });
      await isLocked;
      const claimed = await outbox().claimDue(10, 60_000);
      release();
      await holder;
      expect(claimed.map((n) => n.eventId)).toEqual(['free']);
    });

    it('records a delivery, a retry after a backoff, and the dead letter', async () => {
      await outbox().enqueue([note('ok'), note('later'), note('dead')]);
      const claimed = await outbox().claimDue(10, 60_000);
      const id = (e: string) => claimed.find((n) => n.eventId === e)?.id ?? '';
      await outbox().delivered(id('ok'));
      await outbox().attemptFailed(id('later'), 'HTTP 503', 3_600_000);
      await outbox().attemptFailed(id('dead'), 'HTTP 410', undefined);

      const ok = await outbox().get(id('ok'));
      expect(ok).toMatchObject({ status: 'delivered', lastError: null, attempts: 1 });
      expect(ok?.deliveredAt).toBeInstanceOf(Date);
      const later = await outbox().get(id('later'));
      expect(later).toMatchObject({ status: 'pending', lastError: 'HTTP 503', attempts: 1 });
      expect(later?.nextAt.getTime()).toBeGreaterThan(Date.now() + 3_000_000);
      expect(await outbox().get(id('dead'))).toMatchObject({
        status: 'failed',
        lastError: 'HTTP 410',
      });
      expect(await outbox().claimDue(10, 60_000)).toEqual([]);
      expect((await outbox().nextDue())?.getTime()).toBe(later?.nextAt.getTime());
    });

    it('retry makes a failed one due now with its attempts from zero; a pending or unknown one is not retried', async () => {
      await outbox().enqueue([note('dead')]);
      const [dead] = await outbox().claimDue(10, 60_000);
      await outbox().attemptFailed(dead?.id ?? '', 'refused', undefined);
      await outbox().enqueue([note('waiting')]);
      const [waiting] = await outbox().list({ status: 'pending' });
      const again = await outbox().retry(dead?.id ?? '');
      expect(again).toMatchObject({ eventId: 'dead', status: 'pending', attempts: 0 });
      expect(await outbox().retry(dead?.id ?? '')).toBeUndefined();
      expect(await outbox().retry(waiting?.id ?? '')).toBeUndefined();
      expect(await outbox().retry('no-such-id')).toBeUndefined();
      expect(await outbox().get('no-such-id')).toBeUndefined();
      expect((await outbox().claimDue(10, 60_000)).map((n) => n.eventId).sort()).toEqual([
        'dead',
        'waiting',
      ]);
    });

    it('lists newest first, by status, a page at a time', async () => {
      for (const e of ['n1', 'n2', 'n3', 'n4', 'n5']) await outbox().enqueue([note(e)]);
      const first = await outbox().list({ limit: 2 });
      expect(first.map((n) => n.eventId)).toEqual(['n5', 'n4']);
      const second = await outbox().list({ limit: 2, before: first.at(-1)?.id ?? '' });
      expect(second.map((n) => n.eventId)).toEqual(['n3', 'n2']);
      const last = await outbox().list({ limit: 2, before: second.at(-1)?.id ?? '' });
      expect(last.map((n) => n.eventId)).toEqual(['n1']);

      const failed = await outbox().claimDue(10, 60_000);
      for (const n of failed.filter((n) => ['n2', 'n4'].includes(n.eventId))) {
        await outbox().attemptFailed(n.id, 'refused', undefined);
      }
      const failedPage = await outbox().list({ status: 'failed', limit: 1 });
      expect(failedPage.map((n) => n.eventId)).toEqual(['n4']);
      const next = await outbox().list({ status: 'failed', before: failedPage[0]?.id ?? '' });
      expect(next.map((n) => n.eventId)).toEqual(['n2']);
      expect(await outbox().list({ status: 'delivered' })).toEqual([]);
    });
  },
  {
    empty: async (db) => {
      await db.execute(sql`delete from aura.notifications`);
      await db.execute(sql`delete from aura.paused_states`);
    },
  },
);
