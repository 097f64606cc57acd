import type { SqlTarget } from '@internal/pg-test';
import { beforeAll, expect, it } from 'vitest';
import { describeOnEachStorage, emptyAll, pause } from '../test/support.js';
import {
  AskUserError,
  AskUserStore,
  type AuditEntry,
  exportAudit,
  type ResumeAnswer,
  verifyAudit,
} from './index.js';

const key = 'd'.repeat(32);
const yes: ResumeAnswer = { action: 'accept', content: 'yes' };
const past = () => new Date(Date.now() - 60_000);

async function entries(db: SqlTarget['db']): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const entry of exportAudit(db)) out.push(entry);
  return out;
}

async function refusal(p: Promise<unknown>): Promise<AskUserError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!AskUserError.is(error)) throw new Error(`expected an AskUserError, got ${String(error)}`);
  return error;
}

await describeOnEachStorage(
  'deadlines',
  (s) => {
    let target: SqlTarget;
    let store: AskUserStore;
    let plain: AskUserStore;
    beforeAll(() => {
      ({ target, store } = s);
      plain = new AskUserStore(target.db);
    });

    it('keeps a deadline as plain fields: an absolute time, or a duration by the database clock', async () => {
      const at = new Date('2030-01-02T03:04:05.000Z');
      await store.insert(
        pause('abs', { deadline: { at, answer: { action: 'decline', content: '' } } }),
      );
      await store.insert(pause('rel', { deadline: { inMs: 3_600_000, answer: yes } }));
      await store.insert(pause('none'));
      const [abs, rel, none] = await Promise.all(
        ['abs', 'rel', 'none'].map((t) => store.getByToken(t)),
      );
      expect(abs?.deadline).toEqual({ at, answer: { action: 'decline', content: '' } });
      const left = (rel?.deadline?.at.getTime() ?? 0) - Date.now();
      expect(left).toBeGreaterThan(3_500_000);
      expect(left).toBeLessThanOrEqual(3_600_000);
      expect(none?.deadline).toBeNull();
      // Before the deadline nothing expires, and an answer is taken.
      expect(await store.expire('rel')).toBeUndefined();
      expect(await store.expire('none')).toBeUndefined();
      await store.markResumed('rel', { action: 'decline', content: 'no' });
      expect(await store.getAnswer('rel')).toMatchObject({
        expiredAt: null,
        answer: { action: 'decline' },
      });
    });

    it('refuses a malformed deadline', async () => {
      for (const deadline of [
        { answer: yes },
        { at: new Date(), inMs: 5, answer: yes },
        { at: 'not a time', answer: yes },
        { inMs: 5, answer: { action: 'maybe', content: '' } },
        { inMs: -1, answer: yes },
      ]) {
        const error = await refusal(store.insert(pause('bad', { deadline } as never)));
        expect(error.code).toBe('invalid_pause');
      }
    });

    for (const answer of [
      { action: 'decline', content: '' },
      { action: 'cancel', content: '' },
      { action: 'accept', content: 'go ahead' },
    ] as const) {
      it(`applies the default ${answer.action} at the deadline, once, as the outcome expired`, async () => {
        await store.insert(pause('q', { deadline: { at: past(), answer } }));
        const expired = await store.expire('q');
        expect(expired).toMatchObject({ token: 'q', answer, answeredBy: null });
        expect(expired?.expiredAt).toBeInstanceOf(Date);
        // Applied once: again it returns the same outcome and writes nothing.
        expect(await store.expire('q')).toEqual(expired);
        const [record] = await store.listRecent();
        expect(record).toMatchObject({ resumed: true, answer, expiredAt: expired?.expiredAt });
        const kinds = (await entries(target.db)).map((e) => e.kind);
        expect(kinds).toEqual(['question-created', 'question-expired']);
        expect(await verifyAudit(target.db, { key })).toMatchObject({ ok: true });
      });
    }

    it('refuses an answer after the deadline as expired, pending or applied, and logs the refusal', async () => {
      await store.insert(
        pause('late', { deadline: { at: past(), answer: { action: 'decline', content: '' } } }),
      );
      for (const s of [store, plain]) {
        expect((await refusal(s.markResumed('late', yes))).code).toBe('expired');
        const asAda = s.markResumed('late', yes, { identity: { name: 'ada' } });
        expect((await refusal(asAda)).code).toBe('expired');
        expect((await refusal(s.markResumedBatch({ late: yes }))).code).toBe('expired');
      }
      expect(await store.listPendingAll()).toHaveLength(1);
      await store.expire('late');
      const error = await refusal(store.markResumed('late', yes));
      expect(error).toMatchObject({ code: 'expired', tokens: ['late'] });
      const log = await entries(target.db);
      const refused = log.filter((e) => e.kind === 'answer-refused');
      expect(refused.length).toBe(4);
      expect(refused.every((e) => (e.data as { reason?: string }).reason === 'expired')).toBe(true);
      expect(log.filter((e) => e.kind === 'question-expired')).toHaveLength(1);
      expect(await verifyAudit(target.db, { key })).toMatchObject({ ok: true });
    });

    it('expire of an unknown token is not_found', async () => {
      expect((await refusal(store.expire('nope'))).code).toBe('not_found');
    });
  },
  { audit: { key }, empty: emptyAll },
);
