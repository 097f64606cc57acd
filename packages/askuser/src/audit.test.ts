import { createHash } from 'node:crypto';
import type { SqlTarget } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeOnEachStorage, emptyAll, pause, query, stamp } from '../test/support.js';
import {
  AskUserError,
  AskUserStore,
  type AuditEntry,
  appendAuditEvent,
  auditHead,
  exportAudit,
  purgeAuditOlderThan,
  type ResumeAnswer,
  sealAudit,
  verifyAudit,
} from './index.js';

const key = 'k'.repeat(32);
const yes: ResumeAnswer = { action: 'accept', content: 'yes' };

async function all(db: SqlTarget['db'], options = {}): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const entry of exportAudit(db, options)) out.push(entry);
  return out;
}

await describeOnEachStorage(
  'audit log',
  (s) => {
    let target: SqlTarget;
    let store: AskUserStore;
    beforeAll(() => {
      ({ target, store } = s);
    });

    /** A conversation with a question created, then answered by ada through the page. */
    async function answered(token: string, conversationId = 'c1'): Promise<void> {
      await store.insert(pause(token, { conversationId, audience: { names: ['ada'] } }), {
        runId: `run-${token}`,
        argumentsDigest: 'sha256:args',
      });
      await store.markResumed(token, yes, {
        identity: { name: 'ada', roles: ['operator'] },
        signedInWith: 'key',
        channel: 'page',
        shownDigest: 'sha256:shown',
      });
    }

    it('records a question created and answered, chained and signed, in its conversation’s chain', async () => {
      await answered('t1');
      const entries = await all(target.db);
      expect(entries.map((e) => [e.chain, e.seq, e.kind, e.token])).toEqual([
        ['conversation:c1', 1, 'question-created', 't1'],
        ['conversation:c1', 2, 'question-answered', 't1'],
      ]);
      const [created, answer] = entries;
      expect(created?.data).toMatchObject({
        runId: 'run-t1',
        toolCallId: 'call-t1',
        argumentsDigest: 'sha256:args',
        audience: { names: ['ada'], roles: [] },
      });
      expect(answer?.data).toMatchObject({
        by: 'ada',
        roles: ['operator'],
        signedInWith: 'key',
        channel: 'page',
        action: 'accept',
        content: 'yes',
        shownDigest: 'sha256:shown',
      });
      expect(created?.prev).toBe('0'.repeat(64));
      expect(answer?.prev).toBe(created?.hash);
      expect(answer?.sig).toMatch(/^[0-9a-f]{64}$/);
      expect(await verifyAudit(target.db, { key })).toMatchObject({
        ok: true,
        entries: 2,
        chains: 1,
        problems: [],
      });
    });

    it("keeps a gated call's arguments when given, so that the log holds them and an edit of them", async () => {
      const args = { to: 'PT50', amount: 1240 };
      await store.insert(pause('t1'), { arguments: args });
      await store.insert(pause('t2'));
      await store.markResumed('t1', { action: 'accept', content: '{"to":"PT50","amount":1000}' });
      const entries = await all(target.db);
      const created = entries.filter((e) => e.kind === 'question-created');
      expect(created.map((e) => (e.data as { arguments?: unknown }).arguments)).toEqual([
        args,
        undefined,
      ]);
      expect(entries.find((e) => e.kind === 'question-answered')?.data).toMatchObject({
        content: '{"to":"PT50","amount":1000}',
      });
      expect((await verifyAudit(target.db, { key })).ok).toBe(true);
    });

    it('records refusals: forbidden and already answered, committed though the call throws', async () => {
      await answered('t1');
      const outsider = await store
        .markResumed('t1', yes, { identity: { name: 'eve' } })
        .catch((e) => e);
      expect(AskUserError.hasCode(outsider, 'not_found')).toBe(true);
      await store.insert(pause('t2', { audience: { roles: ['finance'] } }));
      const forbidden = await store
        .markResumed('t2', yes, { identity: { name: 'eve' }, channel: 'api' })
        .catch((e) => e);
      expect(AskUserError.hasCode(forbidden, 'forbidden')).toBe(true);
      const kinds = (await all(target.db)).map((e) => [
        e.kind,
        e.token,
        (e.data as { reason?: string }).reason,
      ]);
      expect(kinds).toEqual([
        ['question-created', 't1', undefined],
        ['question-answered', 't1', undefined],
        ['answer-refused', 't1', 'already_answered'],
        ['question-created', 't2', undefined],
        ['answer-refused', 't2', 'forbidden'],
      ]);
      expect((await store.getByToken('t2')).token).toBe('t2');
      expect((await verifyAudit(target.db, { key })).ok).toBe(true);
    });

    it('records batch answers, cancellations, purges and app events', async () => {
      await store.insert(pause('b1', { conversationId: 'c1' }));
      await store.insert(pause('b2', { conversationId: 'c2' }));
      await store.insert(pause('s1', { conversationId: 'c3' }));
      await store.markResumedBatch(
        { b1: yes, b2: { action: 'decline', content: '' } },
        { answeredBy: 'cli-user' },
      );
      await store.autoResolveForConversation('c3');
      await stamp(target.db, 'resumed_at', { b1: 0, b2: 0 });
      expect(await store.cleanupResumedOlderThan(new Date('2026-02-01T00:00:00Z'))).toBe(2);
      await appendAuditEvent(
        target.db,
        { event: 'operator-added', name: 'ada', roles: ['admin'] },
        { key },
      );
      // A list is appended in its order, after the chain's head.
      await appendAuditEvent(
        target.db,
        [
          { event: 'operator-revoked', name: 'ada' },
          { event: 'operator-added', name: 'bo' },
        ],
        { key },
      );
      const entries = await all(target.db);
      expect(entries.map((e) => [e.chain, e.kind, e.token])).toEqual([
        ['conversation:c1', 'question-created', 'b1'],
        ['conversation:c2', 'question-created', 'b2'],
        ['conversation:c3', 'question-created', 's1'],
        ['conversation:c1', 'question-answered', 'b1'],
        ['conversation:c2', 'question-answered', 'b2'],
        ['conversation:c3', 'question-cancelled', 's1'],
        ['conversation:c1', 'question-purged', null],
        ['conversation:c2', 'question-purged', null],
        ['app', 'app-event', null],
        ['app', 'app-event', null],
        ['app', 'app-event', null],
      ]);
      expect(entries.slice(-3).map((e) => [e.seq, (e.data as { event: string }).event])).toEqual([
        [1, 'operator-added'],
        [2, 'operator-revoked'],
        [3, 'operator-added'],
      ]);
      expect(entries[4]?.data).toMatchObject({ action: 'decline', by: 'cli-user' });
      expect(entries[6]?.data).toMatchObject({ tokens: ['b1'] });
      expect((await verifyAudit(target.db, { key })).ok).toBe(true);
      // A batch naming an answered question is refused whole, and the refusal recorded.
      await store.insert(pause('b3', { conversationId: 'c1' }));
      await store.insert(pause('b4', { conversationId: 'c4' }));
      await store.markResumed('b4', yes);
      const batch = await store.markResumedBatch({ b3: yes, b4: yes }).catch((e) => e);
      expect(AskUserError.hasCode(batch, 'not_found')).toBe(true);
      const last = (await all(target.db)).at(-1);
      expect(last).toMatchObject({
        chain: 'conversation:c4',
        kind: 'answer-refused',
        token: 'b4',
        data: { reason: 'already_answered' },
      });
      expect((await store.getByToken('b3')).token).toBe('b3');
      expect((await verifyAudit(target.db, { key })).ok).toBe(true);
      const reserved = await appendAuditEvent(target.db, {}, { key, chain: 'global' }).catch(
        (e) => e,
      );
      expect(AskUserError.hasCode(reserved, 'invalid_argument')).toBe(true);
      const short = await appendAuditEvent(target.db, {}, { key: 'short' }).catch((e) => e);
      expect(AskUserError.hasCode(short, 'invalid_argument')).toBe(true);
    });

    it('writes nothing when the caller’s transaction rolls back', async () => {
      await target.db
        .transaction(async (tx) => {
          await new AskUserStore(tx, { audit: { key } }).insert(pause('gone'));
          throw new Error('abort');
        })
        .catch(() => {});
      expect(await all(target.db)).toEqual([]);
      expect(await auditHead(target.db, 'conversation:c1')).toBeUndefined();
    });

    it('exports in pages, by conversation and since a time', async () => {
      for (const t of ['e1', 'e2', 'e3']) await answered(t, t === 'e2' ? 'c2' : 'c1');
      const everything = await all(target.db, { pageSize: 2 });
      expect(everything).toHaveLength(6);
      expect(everything.map((e) => e.id)).toEqual(
        [...everything.map((e) => e.id)].sort((a, b) => Number(a) - Number(b)),
      );
      expect((await all(target.db, { conversationId: 'c2' })).map((e) => e.token)).toEqual([
        'e2',
        'e2',
      ]);
      const page = await all(target.db, { limit: 2 });
      const next = await all(target.db, { after: page.at(-1)?.id, limit: 2 });
      expect(next.map((e) => e.id)).toEqual(everything.slice(2, 4).map((e) => e.id));
      expect(await all(target.db, { since: new Date(Date.now() + 60_000) })).toEqual([]);
      await expect(all(target.db, { after: 'x; drop' })).rejects.toSatisfy((e) =>
        AskUserError.hasCode(e, 'invalid_argument'),
      );
    });

    it('seals changed chains into the global chain; auditHead gives its latest hash', async () => {
      await answered('s1', 'c1');
      await answered('s2', 'c2');
      expect(await auditHead(target.db)).toBeUndefined();
      expect(await sealAudit(target.db, { key })).toBe(2);
      expect(await sealAudit(target.db, { key })).toBe(0);
      const head = await auditHead(target.db);
      expect(head).toMatchObject({ chain: 'global', seq: 1 });
      const [seal] = await all(target.db, { chain: 'global' });
      expect(seal?.hash).toBe(head?.hash);
      expect(seal?.data).toEqual({
        heads: [
          { chain: 'conversation:c1', seq: 2, hash: expect.any(String) },
          { chain: 'conversation:c2', seq: 2, hash: expect.any(String) },
        ],
      });
      await answered('s3', 'c1');
      expect(await sealAudit(target.db, { key })).toBe(1);
      expect((await verifyAudit(target.db, { key })).ok).toBe(true);
    });

    describe('tampering is found, naming the first bad entry', () => {
      async function problemOf() {
        const result = await verifyAudit(target.db, { key });
        expect(result.ok).toBe(false);
        return result.problems[0];
      }
      async function entry(token: string, kind: string) {
        return (await all(target.db)).find((e) => e.token === token && e.kind === kind);
      }

      it('an UPDATE of an answered row’s content', async () => {
        await answered('t1');
        const logged = await entry('t1', 'question-answered');
        await target.db.execute(
          sql`update aura.paused_states set resumed_answer = '{"action":"accept","content":"no"}'::jsonb where token = 't1'`,
        );
        expect(await problemOf()).toMatchObject({ token: 't1', id: logged?.id, seq: 2 });
      });

      it('an UPDATE of who answered, and a row reopened for a second answer', async () => {
        await answered('t1');
        await answered('t2');
        await target.db.execute(
          sql`update aura.paused_states set answered_by = 'mallory' where token = 't1'`,
        );
        await target.db.execute(
          sql`update aura.paused_states set resumed_at = null, resumed_answer = null where token = 't2'`,
        );
        const { problems } = await verifyAudit(target.db, { key });
        expect(problems.map((p) => p.token)).toEqual(['t1', 't2']);
        expect(problems[1]?.reason).toContain('pending again');
      });

      it('an UPDATE of an entry’s content, with or without its plain hash recomputed', async () => {
        await answered('t1');
        await answered('t2');
        const target2 = await entry('t1', 'question-answered');
        await target.db.execute(
          sql`update aura.audit_entries set body = replace(body, '"yes"', '"no"') where id = ${target2?.id}::bigint`,
        );
        expect(await problemOf()).toMatchObject({
          id: target2?.id,
          seq: 2,
          chain: 'conversation:c1',
        });
        expect((await problemOf())?.reason).toContain('hash');
        // Someone with write access recomputes the hash: the HMAC still gives it away.
        const [row] = await query(
          target.db,
          sql`select chain, seq::int as seq, kind, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at, token, body, prev from aura.audit_entries where id = ${target2?.id}::bigint`,
        );
        const hash = createHash('sha256')
          .update(
            JSON.stringify([
              1,
              row?.chain,
              row?.seq,
              row?.kind,
              row?.at,
              row?.token,
              row?.body,
              row?.prev,
            ]),
          )
          .digest('hex');
        await target.db.execute(
          sql`update aura.audit_entries set hash = ${hash} where id = ${target2?.id}::bigint`,
        );
        const problem = await problemOf();
        expect(problem).toMatchObject({ id: target2?.id, seq: 2 });
        expect(problem?.reason).toContain('signature');
      });

      it('a DELETE of an entry', async () => {
        await answered('t1');
        await answered('t2');
        const removed = await entry('t1', 'question-answered');
        const after = await entry('t2', 'question-created');
        await target.db.execute(
          sql`delete from aura.audit_entries where id = ${removed?.id}::bigint`,
        );
        expect(await problemOf()).toMatchObject({ id: after?.id, seq: 3, token: 't2' });
      });

      it('a DELETE of the last entries of a chain (its head rewound too, once sealed)', async () => {
        await answered('t1');
        await sealAudit(target.db, { key });
        const last = await entry('t1', 'question-answered');
        await target.db.execute(sql`delete from aura.audit_entries where id = ${last?.id}::bigint`);
        expect(await problemOf()).toMatchObject({ chain: 'conversation:c1', seq: 2, id: null });
        await target.db.execute(
          sql`update aura.audit_heads set seq = 1, hash = (select hash from aura.audit_entries where chain = 'conversation:c1' and seq = 1) where chain = 'conversation:c1'`,
        );
        const { problems } = await verifyAudit(target.db, { key });
        expect(problems.map((p) => [p.chain, p.seq])).toContainEqual(['conversation:c1', 2]);
      });

      it('an INSERT of an entry, in the middle or at the end', async () => {
        await answered('t1');
        const [first] = await all(target.db);
        // Shift the chain to make room, as a forger would, and insert a copy with its fields.
        await target.db.execute(
          sql`update aura.audit_entries set seq = seq + 10 where chain = 'conversation:c1' and seq >= 2`,
        );
        await target.db.execute(sql`insert into aura.audit_entries (chain, seq, kind, at, token, body, prev, hash, sig)
          select chain, 2, 'question-answered', at, token, '{"action":"decline"}', hash, hash, sig
          from aura.audit_entries where id = ${first?.id}::bigint`);
        const problem = await problemOf();
        expect(problem).toMatchObject({ chain: 'conversation:c1', seq: 2 });
        expect(problem?.id).not.toBe(first?.id);
      });

      it('an INSERT at the end of a chain, its head moved along', async () => {
        await answered('t1');
        await target.db.execute(sql`insert into aura.audit_entries (chain, seq, kind, at, token, body, prev, hash, sig)
          select 'conversation:c1', 3, 'question-answered', now(), 't1', '{}', h.hash, repeat('a', 64), repeat('b', 64)
          from aura.audit_heads h where h.chain = 'conversation:c1'`);
        await target.db.execute(
          sql`update aura.audit_heads set seq = 3, hash = repeat('a', 64) where chain = 'conversation:c1'`,
        );
        expect(await problemOf()).toMatchObject({ chain: 'conversation:c1', seq: 3 });
      });
    });

    it('a purge of old entries carries each chain forward: verify still passes, a later tamper is still found', async () => {
      await answered('p1', 'c1');
      await answered('p2', 'c2');
      await target.db.execute(
        sql`update aura.audit_entries set at = timestamptz '2026-01-01T00:00:00Z' where token = 'p1'`,
      );
      // at is hashed: backdating it is itself a tamper, so re-sign those entries as an old log would have them.
      await resign(target, 'conversation:c1');
      await sealAudit(target.db, { key });
      expect((await verifyAudit(target.db, { key })).ok).toBe(true);
      expect(await purgeAuditOlderThan(target.db, new Date('2026-02-01T00:00:00Z'), { key })).toBe(
        2,
      );
      const c1 = await all(target.db, { conversationId: 'c1' });
      expect(c1.map((e) => [e.seq, e.kind])).toEqual([[3, 'chain-purged']]);
      expect(c1[0]?.data).toMatchObject({ throughSeq: 2, count: 2 });
      expect(await verifyAudit(target.db, { key })).toMatchObject({ ok: true, problems: [] });
      await answered('p3', 'c1');
      await sealAudit(target.db, { key });
      expect((await verifyAudit(target.db, { key })).ok).toBe(true);
      // Removing the purge entry too (to hide what it removed) is found.
      await target.db.execute(sql`delete from aura.audit_entries where kind = 'chain-purged'`);
      expect((await verifyAudit(target.db, { key })).problems[0]).toMatchObject({
        chain: 'conversation:c1',
        seq: 4,
      });
    });

    it('a purge of old questions keeps verify passing', async () => {
      await answered('q1');
      await answered('q2');
      await stamp(target.db, 'resumed_at', { q1: 0 });
      expect(await store.cleanupResumedOlderThan(new Date('2026-02-01T00:00:00Z'))).toBe(1);
      expect(await verifyAudit(target.db, { key })).toMatchObject({ ok: true, entries: 5 });
    });
  },
  { audit: { key }, empty: emptyAll },
);

/** Recomputes the hashes and signatures of a chain, as the key holder's writer would. */
async function resign(target: SqlTarget, chain: string): Promise<void> {
  const { createHmac } = await import('node:crypto');
  const rows = await query(
    target.db,
    sql`select id::text as id, chain, seq::int as seq, kind, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at, token, body from aura.audit_entries where chain = ${chain} order by seq`,
  );
  let prev = '0'.repeat(64);
  for (const row of rows) {
    const hash = createHash('sha256')
      .update(JSON.stringify([1, row.chain, row.seq, row.kind, row.at, row.token, row.body, prev]))
      .digest('hex');
    const sig = createHmac('sha256', key).update(hash).digest('hex');
    await target.db.execute(
      sql`update aura.audit_entries set prev = ${prev}, hash = ${hash}, sig = ${sig} where id = ${String(row.id)}::bigint`,
    );
    prev = hash;
  }
  await target.db.execute(sql`update aura.audit_heads set hash = ${prev} where chain = ${chain}`);
}
