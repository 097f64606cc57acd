import type { SqlTarget } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeOnEachStorage, pause, query, stamp, truncate } from '../test/support.js';
import { AskUserError, AskUserStore } from './index.js';

await describeOnEachStorage('AskUserStore reads and inserts', (s) => {
  let target: SqlTarget;
  let store: AskUserStore;
  beforeAll(() => {
    ({ target, store } = s);
  });

  /** Inserts pauses in one transaction, so they share created_at = now(). */
  async function insertInOneTransaction(pauses: Parameters<AskUserStore['insert']>[0][]) {
    await target.db.transaction(async (tx) => {
      const inTx = new AskUserStore(tx);
      for (const p of pauses) await inTx.insert(p);
    });
  }

  describe('insert', () => {
    it('persists the plain fields and reads them back as a Pending', async () => {
      await store.insert(
        pause('p1', {
          conversationId: 'c1',
          kind: 'approval',
          question: 'Deploy?',
          options: [{ label: 'yes' }, { label: 'no' }],
          priority: 7,
          toolCallId: 'call_1',
          resumeContext: { step: 3, note: 'after build' },
          proxiedFromChildId: 'w3',
          proxiedToolCallId: 'child_call_9',
        }),
      );
      const got = await store.getByToken('p1');
      expect(got).toMatchObject({
        token: 'p1',
        conversationId: 'c1',
        kind: 'approval',
        question: 'Deploy?',
        options: [{ label: 'yes' }, { label: 'no' }],
        priority: 7,
        toolCallId: 'call_1',
        resumeContext: { step: 3, note: 'after build' },
        proxiedFromChildId: 'w3',
        proxiedToolCallId: 'child_call_9',
      });
      expect(got.createdAt).toBeInstanceOf(Date);
    });

    it('stores null or omitted options and resume context as SQL NULL', async () => {
      await store.insert(pause('nulls', { options: null, resumeContext: null }));
      await store.insert(pause('omitted'));
      const rows = await query(
        target.db,
        sql`select token, options is null as o, resume_context is null as r from aura.paused_states order by token`,
      );
      expect(rows).toEqual([
        { token: 'nulls', o: true, r: true },
        { token: 'omitted', o: true, r: true },
      ]);
      expect((await store.getByToken('nulls')).options).toBeNull();
      expect((await store.getByToken('omitted')).resumeContext).toBeNull();
    });

    it('stores a null child id and an empty proxied tool-call id as SQL NULL; Pending shows ""', async () => {
      await store.insert(pause('direct', { proxiedFromChildId: null, proxiedToolCallId: '' }));
      const [row] = await query(
        target.db,
        sql`select proxied_from_child_id is null as c, proxied_tool_call_id is null as t from aura.paused_states`,
      );
      expect(row).toEqual({ c: true, t: true });
      const got = await store.getByToken('direct');
      expect(got.proxiedFromChildId).toBe('');
      expect(got.proxiedToolCallId).toBe('');
    });

    it('stores the child id verbatim as text: a flat worker id, not a uuid', async () => {
      await store.insert(pause('proxied', { proxiedFromChildId: 'w12', proxiedToolCallId: 'c7' }));
      const [row] = await query(
        target.db,
        sql`select proxied_from_child_id as c, pg_typeof(proxied_from_child_id)::text as ty from aura.paused_states`,
      );
      expect(row).toEqual({ c: 'w12', ty: 'text' });
    });

    it('defaults priority to 0', async () => {
      await store.insert(pause('p0'));
      expect((await store.getByToken('p0')).priority).toBe(0);
    });

    it('round-trips any JSON value in options and resume context', async () => {
      const json = fc
        .jsonValue()
        .filter((v) => !JSON.stringify(v).includes('\\u0000'))
        .map((v) => JSON.parse(JSON.stringify(v)) as unknown);
      let n = 0;
      await fc.assert(
        fc.asyncProperty(json, json, async (options, resumeContext) => {
          const token = `json-${n++}`;
          await store.insert(pause(token, { options, resumeContext }));
          const got = await store.getByToken(token);
          // SQL NULL and JSON null both read back as null.
          expect(got.options).toEqual(options);
          expect(got.resumeContext).toEqual(resumeContext);
        }),
        { numRuns: 40 },
      );
    });

    it('rejects a duplicate token with duplicate and keeps the first row', async () => {
      await store.insert(pause('dup', { question: 'first' }));
      const error = await store.insert(pause('dup', { question: 'second' })).catch((e) => e);
      expect(AskUserError.hasCode(error, 'duplicate')).toBe(true);
      expect(error).toBeInstanceOf(AskUserError);
      expect(error.sqlState).toBe('23505');
      expect(error.tokens).toEqual(['dup']);
      expect(error.cause).toBeDefined();
      expect((await store.getByToken('dup')).question).toBe('first');
    });

    it('rejects malformed fields with invalid_pause and writes nothing', async () => {
      const bad = [
        pause(''),
        pause('frac', { priority: 1.5 }),
        pause('huge', { priority: 2 ** 31 }),
        { ...pause('missing'), toolCallId: undefined as unknown as string },
        pause('bigint', { options: { n: 10n } }),
        pause('fn', { resumeContext: () => 1 }),
      ];
      for (const p of bad) {
        const error = await store.insert(p).catch((e) => e);
        expect(AskUserError.hasCode(error, 'invalid_pause'), String(p.token)).toBe(true);
      }
      expect(await store.listRecent()).toEqual([]);
    });
  });

  describe('getByToken', () => {
    it('maps an unknown token to not_found', async () => {
      const error = await store.getByToken('nope').catch((e) => e);
      expect(AskUserError.hasCode(error, 'not_found')).toBe(true);
      expect(error.tokens).toEqual(['nope']);
    });

    it('maps an already resumed token to not_found', async () => {
      await store.insert(pause('done'));
      await store.markResumed('done', { action: 'accept', content: 'ok' });
      await expect(store.getByToken('done')).rejects.toSatisfy((e) =>
        AskUserError.hasCode(e, 'not_found'),
      );
    });
  });

  describe('listPending', () => {
    it('orders rows inserted in one transaction (same created_at) by token', async () => {
      await insertInOneTransaction(['t3', 't1', 't5', 't2', 't4'].map((t) => pause(t)));
      const [{ n } = { n: 0 }] = await query(
        target.db,
        sql`select count(distinct created_at)::int as n from aura.paused_states`,
      );
      expect(n).toBe(1);
      const tokens = (await store.listPending('conv-1')).map((p) => p.token);
      expect(tokens).toEqual(['t1', 't2', 't3', 't4', 't5']);
    });

    it('orders by priority DESC, then created_at ASC, then token ASC', async () => {
      await store.insert(pause('late-low-b', { priority: 0 }));
      await insertInOneTransaction([
        pause('tx-high-z', { priority: 5 }),
        pause('tx-high-a', { priority: 5 }),
        pause('tx-low-a', { priority: 0 }),
      ]);
      await store.insert(pause('last-low-0', { priority: 0 }));
      await store.insert(pause('last-neg', { priority: -1 }));
      await stamp(target.db, 'created_at', {
        'late-low-b': 0,
        'tx-high-z': 1,
        'tx-high-a': 1,
        'tx-low-a': 1,
        'last-low-0': 2,
        'last-neg': 3,
      });
      const tokens = (await store.listPending('conv-1')).map((p) => p.token);
      expect(tokens).toEqual([
        'tx-high-a',
        'tx-high-z',
        'late-low-b',
        'tx-low-a',
        'last-low-0',
        'last-neg',
      ]);
    });

    it('is a total order: any set inserted in one transaction lists as (priority DESC, token ASC)', async () => {
      const rows = fc.uniqueArray(
        fc.record({
          token: fc.stringMatching(/^[a-z0-9]{1,6}$/),
          priority: fc.integer({ min: -3, max: 3 }),
        }),
        { selector: (r) => r.token, minLength: 1, maxLength: 25 },
      );
      await fc.assert(
        fc.asyncProperty(rows, async (rs) => {
          await truncate(target.db);
          await insertInOneTransaction(rs.map((r) => pause(r.token, { priority: r.priority })));
          const expected = [...rs]
            .sort((a, b) => b.priority - a.priority || (a.token < b.token ? -1 : 1))
            .map((r) => r.token);
          expect((await store.listPending('conv-1')).map((p) => p.token)).toEqual(expected);
          expect((await store.listPendingAll()).map((p) => p.token)).toEqual(expected);
        }),
        { numRuns: 15 },
      );
    });

    it('lists only the pending rows of that conversation', async () => {
      await store.insert(pause('mine-1', { conversationId: 'A' }));
      await store.insert(pause('mine-2', { conversationId: 'A' }));
      await store.insert(pause('theirs', { conversationId: 'B' }));
      await store.markResumed('mine-2', { action: 'decline', content: '' });
      expect((await store.listPending('A')).map((p) => p.token)).toEqual(['mine-1']);
      expect(await store.listPending('nobody')).toEqual([]);
    });

    it('carries the source thread: the child id, or "" for a direct call', async () => {
      await store.insert(pause('a-direct'));
      await store.insert(pause('b-relay', { proxiedFromChildId: 'w2' }));
      const list = await store.listPending('conv-1');
      expect(list.map((p) => p.proxiedFromChildId)).toEqual(['', 'w2']);
    });

    it('keeps a pause pending however old it is: there is no timeout or expiry', async () => {
      await store.insert(pause('ancient'));
      await target.db.execute(
        sql`update aura.paused_states set created_at = now() - interval '10 years'`,
      );
      expect((await store.listPending('conv-1')).map((p) => p.token)).toEqual(['ancient']);
      expect((await store.getByToken('ancient')).token).toBe('ancient');
    });
  });

  describe('listPendingAll', () => {
    it('lists pending rows across conversations in the same total order', async () => {
      await insertInOneTransaction([
        pause('c', { conversationId: 'X' }),
        pause('a', { conversationId: 'Y' }),
        pause('b', { conversationId: 'Z', priority: -2 }),
        pause('d', { conversationId: 'Y', priority: 4 }),
      ]);
      await store.insert(pause('e', { conversationId: 'X', priority: 4 }));
      await store.markResumed('c', { action: 'cancel', content: '' });
      const list = await store.listPendingAll(10);
      expect(list.map((p) => [p.token, p.conversationId])).toEqual([
        ['d', 'Y'],
        ['e', 'X'],
        ['a', 'Y'],
        ['b', 'Z'],
      ]);
    });

    it('caps at limit, and falls back to 100 when limit <= 0 or omitted', async () => {
      await insertInOneTransaction(
        Array.from({ length: 105 }, (_, i) => pause(`n${String(i).padStart(3, '0')}`)),
      );
      expect(await store.listPendingAll(3)).toHaveLength(3);
      expect((await store.listPendingAll(3)).map((p) => p.token)).toEqual(['n000', 'n001', 'n002']);
      expect(await store.listPendingAll(0)).toHaveLength(100);
      expect(await store.listPendingAll(-5)).toHaveLength(100);
      expect(await store.listPendingAll()).toHaveLength(100);
      expect(await store.listPendingAll(200)).toHaveLength(105);
    });
  });

  it('listPendingAll carries every field of a Pending, as listPending does', async () => {
    await store.insert(
      pause('full', {
        conversationId: 'cz',
        kind: 'approval',
        options: ['a', 'b'],
        priority: 3,
        resumeContext: { k: 1 },
        proxiedFromChildId: 'w5',
        proxiedToolCallId: 'cc',
      }),
    );
    const [fromAll] = await store.listPendingAll();
    const [fromConversation] = await store.listPending('cz');
    expect(fromAll).toEqual(fromConversation);
    expect(fromAll).toMatchObject({
      token: 'full',
      conversationId: 'cz',
      kind: 'approval',
      question: 'question full?',
      options: ['a', 'b'],
      priority: 3,
      toolCallId: 'call-full',
      resumeContext: { k: 1 },
      proxiedFromChildId: 'w5',
      proxiedToolCallId: 'cc',
    });
  });

  it('reports a stored answer that is not { action, content } as corrupt', async () => {
    await store.insert(pause('corrupt'));
    await target.db.execute(
      sql`update aura.paused_states set resumed_at = now(), resumed_answer = '{"action":"maybe"}'`,
    );
    const error = await store.listRecent().catch((e) => e);
    expect(AskUserError.hasCode(error, 'corrupt')).toBe(true);
    expect(error.tokens).toEqual(['corrupt']);
  });

  describe('countPending', () => {
    it('counts pending pauses by kind and priority, and those past their deadline', async () => {
      const past = {
        at: new Date(Date.now() - 60_000),
        answer: { action: 'decline' as const, content: '' },
      };
      const later = {
        at: new Date(Date.now() + 3_600_000),
        answer: { action: 'decline' as const, content: '' },
      };
      await store.insert(pause('a1', { kind: 'ask_user' }));
      await store.insert(pause('a2', { kind: 'ask_user', deadline: past }));
      await store.insert(pause('b1', { kind: 'approval', priority: 10, deadline: later }));
      await store.insert(pause('done', { kind: 'approval', priority: 10 }));
      await store.markResumed('done', { action: 'accept', content: 'yes' });
      const counts = await store.countPending();
      expect(counts.sort((x, y) => x.kind.localeCompare(y.kind))).toEqual([
        { kind: 'approval', priority: 10, pending: 1, overdue: 0 },
        { kind: 'ask_user', priority: 0, pending: 2, overdue: 1 },
      ]);
    });
  });

  describe('listForConversation', () => {
    it("lists one conversation's pending and resolved pauses, oldest first", async () => {
      await store.insert(pause('b-second', { conversationId: 'mine' }));
      await store.insert(pause('a-first', { conversationId: 'mine' }));
      await store.insert(pause('c-third', { conversationId: 'mine' }));
      await store.insert(pause('other', { conversationId: 'theirs' }));
      await store.markResumed('a-first', { action: 'accept', content: 'yes' });
      await stamp(target.db, 'created_at', { 'a-first': 1, 'b-second': 2, 'c-third': 2 });
      const listed = await store.listForConversation('mine');
      expect(listed.map((r) => [r.token, r.resumed])).toEqual([
        ['a-first', true],
        ['b-second', false],
        ['c-third', false],
      ]);
      expect(listed[0]?.answer).toEqual({ action: 'accept', content: 'yes' });
      expect(await store.listForConversation('nobody')).toEqual([]);
    });
  });

  describe('listRecent', () => {
    it('lists pending and resolved rows newest first with resolution state and answer content', async () => {
      await store.insert(pause('old'));
      await store.insert(pause('mid'));
      await store.insert(pause('new'));
      await store.markResumed('mid', { action: 'accept', content: 'blue' });
      await stamp(target.db, 'created_at', { old: 1, mid: 2, new: 3 });
      const recent = await store.listRecent();
      expect(recent.map((r) => [r.token, r.resumed, r.resumedAnswer])).toEqual([
        ['new', false, ''],
        ['mid', true, 'blue'],
        ['old', false, ''],
      ]);
      expect(recent[1]?.answer).toEqual({ action: 'accept', content: 'blue' });
      expect(recent[1]?.resumedAt).toBeInstanceOf(Date);
      expect(recent[0]?.answer).toBeNull();
    });

    it('breaks created_at ties by token, newest first means token DESC', async () => {
      await insertInOneTransaction(['r2', 'r1', 'r3'].map((t) => pause(t)));
      expect((await store.listRecent()).map((r) => r.token)).toEqual(['r3', 'r2', 'r1']);
    });

    it('caps at limit, and falls back to 50 when limit <= 0 or omitted', async () => {
      await insertInOneTransaction(Array.from({ length: 55 }, (_, i) => pause(`r${i}`)));
      expect(await store.listRecent(2)).toHaveLength(2);
      expect(await store.listRecent(0)).toHaveLength(50);
      expect(await store.listRecent(-1)).toHaveLength(50);
      expect(await store.listRecent()).toHaveLength(50);
      expect(await store.listRecent(60)).toHaveLength(55);
    });
  });
});
