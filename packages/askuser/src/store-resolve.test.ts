import type { SqlTarget } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeOnEachStorage, loggedDb, pause, query, stamp } from '../test/support.js';
import {
  ACTION_ACCEPT,
  ACTION_CANCEL,
  ACTION_DECLINE,
  AskUserError,
  AskUserStore,
  AUTO_TERMINATED_MARKER,
  actions,
  type ResumeAnswer,
} from './index.js';

const yes: ResumeAnswer = { action: 'accept', content: 'yes' };

await describeOnEachStorage('AskUserStore resolution', (s) => {
  let target: SqlTarget;
  let store: AskUserStore;
  beforeAll(() => {
    ({ target, store } = s);
  });

  async function pendingTokens(): Promise<string[]> {
    return (await store.listPendingAll(1000)).map((p) => p.token).sort();
  }

  describe('markResumed', () => {
    it('accepts the three MCP actions and stores { action, content }', async () => {
      expect(actions).toEqual({ accept: 'accept', decline: 'decline', cancel: 'cancel' });
      const answers = [
        { action: ACTION_ACCEPT, content: 'blue' },
        { action: ACTION_DECLINE, content: '' },
        { action: ACTION_CANCEL, content: 'stop' },
      ] as const;
      for (const [i, answer] of answers.entries()) {
        await store.insert(pause(`m${i}`));
        await store.markResumed(`m${i}`, answer);
        expect((await store.getAnswer(`m${i}`))?.answer).toEqual(answer);
      }
      const rows = await query(
        target.db,
        sql`select resumed_answer::text as a from aura.paused_states where token = 'm0'`,
      );
      expect(JSON.parse(String(rows[0]?.a))).toEqual({ action: 'accept', content: 'blue' });
      expect(await pendingTokens()).toEqual([]);
    });

    it('returns the question it resolved: plain, checked against an identity, audited', async () => {
      const asked = {
        priority: 2,
        audience: { names: ['ada'], roles: ['ops'] },
        resumeContext: { run: 'r1' },
      };
      await store.insert(pause('ret-plain', asked));
      await store.insert(pause('ret-checked', asked));
      await store.insert(pause('ret-audited', asked));
      const plain = await store.markResumed('ret-plain', yes);
      const checked = await store.markResumed('ret-checked', yes, {
        identity: { name: 'ada', roles: [] },
      });
      const audited = await new AskUserStore(target.db, {
        audit: { key: 'k'.repeat(32) },
      }).markResumed('ret-audited', yes);
      for (const [token, outcome] of [
        ['ret-plain', plain],
        ['ret-checked', checked],
        ['ret-audited', audited],
      ] as const) {
        const stored = await store.getAnswer(token);
        expect(outcome).toEqual({
          resolved: true,
          question: {
            conversationId: 'conv-1',
            toolCallId: `call-${token}`,
            kind: 'ask_user',
            priority: 2,
            createdAt: stored?.createdAt,
            resumedAt: stored?.resumedAt,
            audience: { names: ['ada'], roles: ['ops'] },
            resumeContext: { run: 'r1' },
          },
        });
      }
    });

    it('returns the questions a batch resolved, in token order, as a lone answer would', async () => {
      const asked = {
        priority: 1,
        audience: { names: ['ada'], roles: ['ops'] },
        resumeContext: { run: 'r2' },
      };
      await store.insert(pause('rb-2', asked));
      await store.insert(pause('rb-1', { ...asked, kind: 'approve' }));
      const resolved = await store.resolveBatch({ 'rb-2': yes, 'rb-1': yes });
      const expected = [];
      for (const token of ['rb-1', 'rb-2']) {
        const stored = await store.getAnswer(token);
        expected.push({
          token,
          conversationId: 'conv-1',
          toolCallId: `call-${token}`,
          kind: token === 'rb-1' ? 'approve' : 'ask_user',
          priority: 1,
          createdAt: stored?.createdAt,
          resumedAt: stored?.resumedAt,
          audience: { names: ['ada'], roles: ['ops'] },
          resumeContext: { run: 'r2' },
        });
      }
      expect(resolved).toEqual(expected);
      expect(await store.resolveBatch([])).toEqual([]);
    });

    it('rejects any other action with invalid_answer and changes nothing', async () => {
      await store.insert(pause('inv'));
      const bad: unknown[] = [
        { action: 'approve', content: 'x' },
        { action: 'ACCEPT', content: 'x' },
        { action: 'accept' },
        { action: 'accept', content: 3 },
        { action: 'accept', content: 'x', extra: 1 },
        null,
      ];
      for (const answer of bad) {
        const error = await store.markResumed('inv', answer as ResumeAnswer).catch((e) => e);
        expect(AskUserError.hasCode(error, 'invalid_answer'), JSON.stringify(answer)).toBe(true);
        expect(error.code).toBe('invalid_answer');
      }
      expect(await pendingTokens()).toEqual(['inv']);
    });

    it('maps an unknown token to not_found', async () => {
      await expect(store.markResumed('ghost', yes)).rejects.toSatisfy((e) =>
        AskUserError.hasCode(e, 'not_found'),
      );
    });

    it('resolves once: a second answer is not_found and the first answer stays', async () => {
      await store.insert(pause('once'));
      await store.markResumed('once', { action: 'accept', content: 'first' });
      const error = await store
        .markResumed('once', { action: 'decline', content: 'second' })
        .catch((e) => e);
      expect(AskUserError.hasCode(error, 'not_found')).toBe(true);
      expect((await store.getAnswer('once'))?.answer).toEqual({
        action: 'accept',
        content: 'first',
      });
    });
  });

  describe('text no database stores (a NUL, a lone surrogate)', () => {
    const has = (code: string) => (e: unknown) => AskUserError.hasCode(e, code as never);

    it('in an answer: invalid_answer naming it, before the database; the question still waits', async () => {
      await store.insert(pause('text-1'));
      for (const content of ['a\u0000b', '\ud800x', 'x\udfff']) {
        const error = await store
          .markResumed('text-1', { action: 'accept', content })
          .catch((e: unknown) => e);
        expect(AskUserError.hasCode(error, 'invalid_answer'), String(error)).toBe(true);
        expect((error as Error).message).toMatch(/holds a (NUL character|lone surrogate)/);
        await expect(
          store.markResumedBatch([{ token: 'text-1', answer: { action: 'accept', content } }]),
        ).rejects.toSatisfy(has('invalid_answer'));
      }
      expect((await store.getByToken('text-1')).token).toBe('text-1');
    });

    it('in a token: not_found, as for any token no question has', async () => {
      await store.insert(pause('text-2'));
      for (const token of ['abc\u0000def', '\ud800', 'text-2\u0000']) {
        await expect(store.getByToken(token)).rejects.toSatisfy(has('not_found'));
        await expect(store.getAnswer(token)).rejects.toSatisfy(has('not_found'));
        await expect(store.markResumed(token, yes)).rejects.toSatisfy(has('not_found'));
        await expect(store.expire(token)).rejects.toSatisfy(has('not_found'));
        await expect(store.applyDue(token)).rejects.toSatisfy(has('not_found'));
        expect(await store.listApprovals(token)).toEqual([]);
        const batch = await store
          .markResumedBatch([
            { token: 'text-2', answer: yes },
            { token, answer: yes },
          ])
          .catch((e: unknown) => e);
        expect(AskUserError.hasCode(batch, 'not_found')).toBe(true);
        expect((batch as AskUserError).tokens).toEqual([token]);
      }
      expect((await store.getByToken('text-2')).token).toBe('text-2');
    });

    it('in a new question: invalid_pause, also deep in its JSON (the database refuses it: SQLSTATE class 22, never unavailable)', async () => {
      for (const [field, extra] of [
        ['token', { token: 'bad\u0000' }],
        ['question', { question: 'Go\u0000?' }],
        ['conversationId', { conversationId: '\udc00' }],
      ] as const) {
        const error = await store.insert(pause('text-3', extra)).catch((e: unknown) => e);
        expect(AskUserError.hasCode(error, 'invalid_pause'), String(error)).toBe(true);
        expect((error as Error).message).toContain(`invalid pause field ${field}`);
      }
      // Past the fields checked here: the database refuses it, and says which SQLSTATE.
      const deep = await store
        .insert(pause('text-4', { options: ['ok', 'a\u0000b'] }))
        .catch((e: unknown) => e);
      expect(AskUserError.hasCode(deep, 'invalid_pause'), String(deep)).toBe(true);
      expect((deep as AskUserError).sqlState).toMatch(/^22/);
      expect((deep as Error).message).toContain('the database refused a value it was given');
      await expect(store.getByToken('text-4')).rejects.toSatisfy(has('not_found'));
    });
  });

  describe('markResumedBatch', () => {
    async function seed(tokens: string[]) {
      for (const t of tokens) await store.insert(pause(t));
    }

    it('accepts a Map, a record and an array of { token, answer }', async () => {
      await seed(['a1', 'a2', 'b1', 'b2', 'c1', 'c2']);
      expect(
        await store.markResumedBatch(
          new Map([
            ['a1', yes],
            ['a2', { action: 'decline', content: '' }],
          ]),
        ),
      ).toBe(2);
      expect(await store.markResumedBatch({ b1: yes, b2: yes })).toBe(2);
      expect(
        await store.markResumedBatch([
          { token: 'c1', answer: yes },
          { token: 'c2', answer: { action: 'cancel', content: '' } },
        ]),
      ).toBe(2);
      expect(await pendingTokens()).toEqual([]);
      expect((await store.getAnswer('a2'))?.answer).toEqual({ action: 'decline', content: '' });
      expect((await store.getAnswer('c2'))?.answer.action).toBe('cancel');
    });

    it('resolves nothing when one token is unknown, and names it', async () => {
      await seed(['k1', 'k2']);
      const error = await store
        .markResumedBatch({ k1: yes, zz: yes, k2: yes, aa: yes })
        .catch((e) => e);
      expect(AskUserError.hasCode(error, 'not_found')).toBe(true);
      expect(error.tokens).toEqual(['aa', 'zz']);
      expect(await pendingTokens()).toEqual(['k1', 'k2']);
    });

    it('resolves nothing when one token is already resumed', async () => {
      await seed(['r1', 'r2', 'r3']);
      await store.markResumed('r2', { action: 'accept', content: 'earlier' });
      const error = await store.markResumedBatch({ r1: yes, r2: yes, r3: yes }).catch((e) => e);
      expect(AskUserError.hasCode(error, 'not_found')).toBe(true);
      expect(error.tokens).toEqual(['r2']);
      expect(await pendingTokens()).toEqual(['r1', 'r3']);
      expect((await store.getAnswer('r2'))?.answer.content).toBe('earlier');
    });

    it('resolves nothing when one answer is invalid', async () => {
      await seed(['i1', 'i2']);
      const error = await store
        .markResumedBatch({ i1: yes, i2: { action: 'maybe', content: '' } as never })
        .catch((e) => e);
      expect(AskUserError.hasCode(error, 'invalid_answer')).toBe(true);
      expect(error.tokens).toEqual(['i2']);
      expect(await pendingTokens()).toEqual(['i1', 'i2']);
    });

    it('rejects an array naming a token twice and resolves nothing', async () => {
      await seed(['d1']);
      const error = await store
        .markResumedBatch([
          { token: 'd1', answer: yes },
          { token: 'd1', answer: { action: 'decline', content: '' } },
        ])
        .catch((e) => e);
      expect(AskUserError.hasCode(error, 'invalid_answer')).toBe(true);
      expect(await pendingTokens()).toEqual(['d1']);
    });

    it('does nothing for an empty batch', async () => {
      expect(await store.markResumedBatch({})).toBe(0);
      expect(await store.markResumedBatch(new Map())).toBe(0);
      expect(await store.markResumedBatch([])).toBe(0);
    });

    it('sends one statement for the whole batch, not one per token', async () => {
      const tokens = Array.from({ length: 200 }, (_, i) => `s${i}`);
      await target.db.transaction(async (tx) => {
        const inTx = new AskUserStore(tx);
        for (const t of tokens) await inTx.insert(pause(t));
      });
      const logged = loggedDb(target);
      const n = await new AskUserStore(logged.db).markResumedBatch(
        Object.fromEntries(tokens.map((t) => [t, yes])),
      );
      expect(n).toBe(200);
      expect(logged.statements).toHaveLength(1);
      expect(await pendingTokens()).toEqual([]);
    });

    it('works on a transaction handle and rolls back with the caller', async () => {
      await seed(['x1', 'x2']);
      await target.db
        .transaction(async (tx) => {
          await new AskUserStore(tx).markResumedBatch({ x1: yes, x2: yes });
          throw new Error('caller aborts');
        })
        .catch(() => {});
      expect(await pendingTokens()).toEqual(['x1', 'x2']);
    });
  });

  describe('autoResolveForConversation', () => {
    it('resolves every open pause of the conversation with the marker, and only those', async () => {
      await store.insert(pause('o1', { conversationId: 'stop-me' }));
      await store.insert(pause('o2', { conversationId: 'stop-me' }));
      await store.insert(pause('o3', { conversationId: 'stop-me' }));
      await store.insert(pause('keep', { conversationId: 'other' }));
      await store.markResumed('o3', { action: 'accept', content: 'answered before' });
      expect(await store.autoResolveForConversation('stop-me')).toBe(2);
      expect(await store.listPending('stop-me')).toEqual([]);
      expect(await pendingTokens()).toEqual(['keep']);
      const recent = await store.listRecent();
      const byToken = new Map(recent.map((r) => [r.token, r]));
      expect(byToken.get('o1')?.resumedAnswer).toBe(AUTO_TERMINATED_MARKER);
      expect(byToken.get('o1')?.answer).toEqual({
        action: 'cancel',
        content: AUTO_TERMINATED_MARKER,
      });
      expect(byToken.get('o2')?.resumed).toBe(true);
      expect(byToken.get('o3')?.resumedAnswer).toBe('answered before');
      expect(await store.autoResolveForConversation('stop-me')).toBe(0);
    });

    it('is atomic: rolled back with the caller transaction, nothing is resolved', async () => {
      await store.insert(pause('t1', { conversationId: 'cx' }));
      await store.insert(pause('t2', { conversationId: 'cx' }));
      await target.db
        .transaction(async (tx) => {
          expect(await new AskUserStore(tx).autoResolveForConversation('cx')).toBe(2);
          throw new Error('abort');
        })
        .catch(() => {});
      expect((await store.listPending('cx')).map((p) => p.token)).toEqual(['t1', 't2']);
    });
  });

  describe('cleanupResumedOlderThan', () => {
    it('deletes resolved rows answered before the cutoff and returns the count', async () => {
      await store.insert(pause('old-done'));
      await store.insert(pause('new-done'));
      await store.markResumedBatch({ 'old-done': yes, 'new-done': yes });
      await target.db.execute(
        sql`update aura.paused_states set resumed_at = '2001-01-01T00:00:00Z' where token = 'old-done'`,
      );
      expect(await store.cleanupResumedOlderThan(new Date('2010-01-01T00:00:00Z'))).toBe(1);
      expect((await store.listRecent()).map((r) => r.token)).toEqual(['new-done']);
    });

    it('rejects an invalid cutoff and deletes nothing', async () => {
      await store.insert(pause('kept'));
      await store.markResumed('kept', yes);
      const error = await store.cleanupResumedOlderThan(new Date('nope')).catch((e) => e);
      expect(AskUserError.hasCode(error, 'invalid_argument')).toBe(true);
      expect((await store.listRecent()).map((r) => r.token)).toEqual(['kept']);
    });

    it('keeps the resolved rows of the conversations it is told to keep; a dry run only counts', async () => {
      await store.insert(pause('done-a', { conversationId: 'a' }));
      await store.insert(pause('done-b', { conversationId: 'b' }));
      await store.insert(pause('done-c', { conversationId: 'c' }));
      await store.markResumedBatch({ 'done-a': yes, 'done-b': yes, 'done-c': yes });
      const future = new Date(Date.now() + 24 * 3600 * 1000);
      const keep = { keepConversations: ['a', 'c', 'no-such'] };
      expect(await store.cleanupResumedOlderThan(future, { ...keep, dryRun: true })).toBe(1);
      expect(await store.cleanupResumedOlderThan(future, { dryRun: true })).toBe(3);
      expect((await store.listRecent()).map((r) => r.token).sort()).toEqual([
        'done-a',
        'done-b',
        'done-c',
      ]);
      expect(await store.cleanupResumedOlderThan(future, keep)).toBe(1);
      expect((await store.listRecent()).map((r) => r.token).sort()).toEqual(['done-a', 'done-c']);
      const bad = await store
        .cleanupResumedOlderThan(future, { keepConversations: 'a' as unknown as string[] })
        .catch((e) => e);
      expect(AskUserError.hasCode(bad, 'invalid_argument')).toBe(true);
      expect(await store.cleanupResumedOlderThan(future)).toBe(2);
    });

    it('never deletes a pending row, however old', async () => {
      await store.insert(pause('pending-old'));
      await store.insert(pause('done'));
      await store.markResumed('done', yes);
      await target.db.execute(
        sql`update aura.paused_states set created_at = '1999-01-01T00:00:00Z'`,
      );
      const future = new Date(Date.now() + 24 * 3600 * 1000);
      expect(await store.cleanupResumedOlderThan(future)).toBe(1);
      expect(await pendingTokens()).toEqual(['pending-old']);
      expect(await store.cleanupResumedOlderThan(future)).toBe(0);
    });
  });

  describe('listAnswered and getAnswer', () => {
    it('lists resolved rows with their answers, oldest answer first, filtered and capped', async () => {
      for (const t of ['q1', 'q2', 'q3', 'q4']) {
        await store.insert(pause(t, { conversationId: t === 'q4' ? 'other' : 'conv-1' }));
      }
      await store.markResumed('q3', { action: 'accept', content: 'third first' });
      await store.markResumed('q1', { action: 'decline', content: '' });
      await store.markResumed('q4', yes);
      await stamp(target.db, 'resumed_at', { q3: 1, q1: 2, q4: 3 });
      const answered = await store.listAnswered();
      expect(answered.map((a) => [a.token, a.answer.action])).toEqual([
        ['q3', 'accept'],
        ['q1', 'decline'],
        ['q4', 'accept'],
      ]);
      expect(answered[0]).toMatchObject({ conversationId: 'conv-1', toolCallId: 'call-q3' });
      expect(answered[0]?.resumedAt).toBeInstanceOf(Date);
      expect((await store.listAnswered({ limit: 1 })).map((a) => a.token)).toEqual(['q3']);
      expect((await store.listAnswered({ conversationId: 'other' })).map((a) => a.token)).toEqual([
        'q4',
      ]);
    });

    it('breaks resumed_at ties by token', async () => {
      for (const t of ['b', 'a', 'c']) await store.insert(pause(t));
      // One statement: the three answers share resumed_at.
      await store.markResumedBatch({ b: yes, c: yes, a: yes });
      expect((await store.listAnswered()).map((a) => a.token)).toEqual(['a', 'b', 'c']);
    });

    it('falls back to 100 rows when limit <= 0', async () => {
      const tokens = Array.from({ length: 101 }, (_, i) => `l${i}`);
      await target.db.transaction(async (tx) => {
        for (const t of tokens) await new AskUserStore(tx).insert(pause(t));
      });
      await store.markResumedBatch(Object.fromEntries(tokens.map((t) => [t, yes])));
      expect(await store.listAnswered({ limit: 0 })).toHaveLength(100);
      expect(await store.listAnswered({ limit: 500 })).toHaveLength(101);
    });

    it('finds an answer given before the reader existed (a restart)', async () => {
      await store.insert(pause('offline'));
      await store.markResumed('offline', { action: 'accept', content: 'while you slept' });
      const afterRestart = new AskUserStore(target.db);
      expect((await afterRestart.listAnswered()).map((a) => a.answer.content)).toEqual([
        'while you slept',
      ]);
      expect((await afterRestart.getAnswer('offline'))?.answer.content).toBe('while you slept');
    });

    it('getAnswer: undefined while pending, not_found for an unknown token', async () => {
      await store.insert(pause('waiting'));
      expect(await store.getAnswer('waiting')).toBeUndefined();
      await expect(store.getAnswer('never')).rejects.toSatisfy((e) =>
        AskUserError.hasCode(e, 'not_found'),
      );
    });
  });
});
