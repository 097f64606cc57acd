import type { SqlTarget } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { beforeAll, expect, it } from 'vitest';
import { describeOnEachStorage, emptyAll, pause, query } from '../test/support.js';
import {
  AskUserError,
  type AskUserStore,
  type AuditEntry,
  exportAudit,
  type ResumeAnswer,
  verifyAudit,
} from './index.js';

const key = 'd'.repeat(32);
const yes: ResumeAnswer = { action: 'accept', content: 'yes' };

async function entries(db: SqlTarget['db']): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const entry of exportAudit(db)) out.push(entry);
  return out;
}

await describeOnEachStorage(
  'a late answer racing the deadline',
  (s) => {
    let target: SqlTarget;
    let store: AskUserStore;
    beforeAll(() => {
      ({ target, store } = s);
    });

    it('a late answer racing the deadline: exactly one of expired or answered wins, 100 rounds', async () => {
      const wins = { answered: 0, expired: 0 };
      for (let round = 0; round < 100; round++) {
        const token = `race-${round}`;
        await store.insert(
          pause(token, {
            deadline: { inMs: round % 4, answer: { action: 'decline', content: '' } },
          }),
        );
        const answering = store.markResumed(token, yes).then(
          () => 'answered' as const,
          (e: unknown) => {
            if (AskUserError.hasCode(e, 'expired')) return 'refused' as const;
            throw e;
          },
        );
        let applied = await store.expire(token);
        while (applied === undefined) applied = await store.expire(token);
        const answered = await answering;
        if (answered === 'answered') {
          expect(applied).toMatchObject({ expiredAt: null, answer: yes });
          wins.answered++;
        } else {
          expect(applied.expiredAt).toBeInstanceOf(Date);
          expect(applied.answer).toEqual({ action: 'decline', content: '' });
          wins.expired++;
        }
      }
      expect(wins.answered + wins.expired).toBe(100);
      const log = await entries(target.db);
      const count = (kind: string) => log.filter((e) => e.kind === kind).length;
      expect(count('question-answered')).toBe(wins.answered);
      expect(count('question-expired')).toBe(wins.expired);
      expect(count('answer-refused')).toBe(wins.expired);
      // Never both: no token has an answer entry and an expiry entry.
      const outcomes = new Map<string, number>();
      for (const e of log) {
        if (e.kind === 'question-answered' || e.kind === 'question-expired') {
          outcomes.set(e.token ?? '', (outcomes.get(e.token ?? '') ?? 0) + 1);
        }
      }
      expect([...outcomes.values()].every((n) => n === 1)).toBe(true);
      expect(outcomes.size).toBe(100);
      const rows = await query(
        target.db,
        sql`select count(*)::int as n from aura.paused_states where resumed_at is null`,
      );
      expect(rows[0]?.n).toBe(0);
      expect(await verifyAudit(target.db, { key })).toMatchObject({ ok: true });
      // 100 rounds of a few statements each: alone it takes a few seconds, on a loaded machine more.
    }, 90_000);
  },
  { audit: { key }, empty: emptyAll },
);
