import { openServerTarget, type SqlTarget, serverForTests } from '@internal/pg-test';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pause, waitForLockWaiters } from '../test/support.js';
import {
  AskUserError,
  AskUserStore,
  type AuditEntry,
  exportAudit,
  migrate,
  verifyAudit,
} from './index.js';

const serverUrl = await serverForTests();
const key = 'a-key-kept-outside-the-database';

describe.skipIf(serverUrl === undefined)('audited answers under concurrency (server)', () => {
  let target: SqlTarget;
  const clients: postgres.Sql[] = [];

  function connection(): postgres.Sql {
    const client = postgres(target.url ?? '', { max: 1, onnotice: () => {} });
    clients.push(client);
    return client;
  }

  async function entries(): Promise<AuditEntry[]> {
    const out: AuditEntry[] = [];
    for await (const e of exportAudit(target.db)) out.push(e);
    return out;
  }

  /** An answer to `token` in a transaction of its own that commits when `release` is called. */
  async function answeredNotCommitted(token: string) {
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let answeredInside!: () => void;
    const inside = new Promise<void>((r) => {
      answeredInside = r;
    });
    const held = drizzle({ client: connection() }).transaction(async (tx) => {
      await new AskUserStore(tx, { audit: { key } }).markResumed(token, {
        action: 'accept',
        content: '',
      });
      answeredInside();
      await released;
    });
    await inside;
    return { release, held };
  }

  beforeAll(async () => {
    target = await openServerTarget(serverUrl ?? '');
    await migrate(target.db);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end({ timeout: 5 })));
    await target?.close();
  });

  it('20 operators answer one question at once: one wins, 19 are already answered, the log holds exactly that', async () => {
    const store = new AskUserStore(target.db, { audit: { key } });
    await store.insert(
      pause('race', { conversationId: 'c-race', audience: { roles: ['operator'] } }),
    );
    const operators = Array.from({ length: 20 }, (_, i) => ({
      name: `op${i}`,
      store: new AskUserStore(drizzle({ client: connection() }), { audit: { key } }),
    }));
    // Hold the row so that all twenty queue behind it and truly overlap when it is released.
    const holder = connection();
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => {
      locked = r;
    });
    const held = holder.begin(async (tx) => {
      await tx`select token from aura.paused_states where token = 'race' for update`;
      locked();
      await released;
    });
    await isLocked;
    const results = Promise.allSettled(
      operators.map(({ name, store: s }) =>
        s.markResumed(
          'race',
          { action: 'accept', content: name },
          { identity: { name, roles: ['operator'] }, signedInWith: 'key', channel: 'api' },
        ),
      ),
    );
    await waitForLockWaiters(target.db, 20);
    release();
    await held;
    const settled = await results;
    const winners = operators
      .filter((_, i) => settled[i]?.status === 'fulfilled')
      .map((o) => o.name);
    const losers = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(19);
    for (const error of losers) expect(AskUserError.hasCode(error, 'not_found')).toBe(true);
    const answer = await store.getAnswer('race');
    expect(answer?.answeredBy).toBe(winners[0]);
    expect(answer?.answer.content).toBe(winners[0]);

    const log = (await entries()).filter((e) => e.chain === 'conversation:c-race');
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect(log[0]?.kind).toBe('question-created');
    expect(log[1]).toMatchObject({ kind: 'question-answered', data: { by: winners[0] } });
    const refused = log.slice(2);
    expect(refused.every((e) => e.kind === 'answer-refused')).toBe(true);
    expect(refused.map((e) => (e.data as { reason: string }).reason)).toEqual(
      Array(19).fill('already_answered'),
    );
    expect(refused.map((e) => (e.data as { by: string }).by).sort()).toEqual(
      operators
        .map((o) => o.name)
        .filter((n) => n !== winners[0])
        .sort(),
    );
    expect(await verifyAudit(target.db, { key })).toMatchObject({ ok: true, problems: [] });
  });

  it('answers of different conversations do not wait for each other’s chain', async () => {
    const store = new AskUserStore(target.db, { audit: { key } });
    await store.insert(pause('x1', { conversationId: 'c-x1' }));
    await store.insert(pause('x2', { conversationId: 'c-x2' }));
    // A transaction holding conversation c-x1's chain (an answer not yet committed)...
    const { release, held } = await answeredNotCommitted('x1');
    // ...does not hold up an answer in conversation c-x2.
    const other = new AskUserStore(drizzle({ client: connection() }), { audit: { key } });
    await other.markResumed('x2', { action: 'accept', content: '' });
    release();
    await held;
    expect((await verifyAudit(target.db, { key })).ok).toBe(true);
  });

  it('answers of one conversation at once: each recorded, the chain in order', async () => {
    const store = new AskUserStore(target.db, { audit: { key } });
    const tokens = Array.from({ length: 6 }, (_, i) => `same-${i}`);
    for (const token of tokens) await store.insert(pause(token, { conversationId: 'c-same' }));
    // An answer not yet committed holds the chain's head...
    const { release, held } = await answeredNotCommitted('same-0');
    // ...so the five others wait for it, then append after it, one at a time.
    const answers = Promise.all(
      tokens
        .slice(1)
        .map((token) =>
          new AskUserStore(drizzle({ client: connection() }), { audit: { key } }).markResumed(
            token,
            { action: 'accept', content: token },
            { identity: { name: `op-${token}`, roles: ['operator'] }, channel: 'api' },
          ),
        ),
    );
    await waitForLockWaiters(target.db, 5);
    release();
    await held;
    await answers;
    for (const token of tokens)
      expect((await store.getAnswer(token))?.answer.action).toBe('accept');
    const log = (await entries()).filter((e) => e.chain === 'conversation:c-same');
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const answered = log.filter((e) => e.kind === 'question-answered').map((e) => e.token);
    expect(answered.sort()).toEqual([...tokens].sort());
    expect(await verifyAudit(target.db, { key })).toMatchObject({ ok: true, problems: [] });
  });
  it('questions of one conversation at once, its first ones too: one makes its chain, the others append after it', async () => {
    // Round 0 meets on a chain with no head yet (its insert), round 1 on the head's row lock.
    for (const round of [0, 1]) {
      let release!: () => void;
      const released = new Promise<void>((r) => {
        release = r;
      });
      let createdInside!: () => void;
      const inside = new Promise<void>((r) => {
        createdInside = r;
      });
      // A question's transaction holds the chain's head, not yet committed...
      const held = drizzle({ client: connection() }).transaction(async (tx) => {
        await new AskUserStore(tx, { audit: { key } }).insert(
          pause(`new-${round}-0`, { conversationId: 'c-new' }),
        );
        createdInside();
        await released;
      });
      await inside;
      // ...so four others of the same conversation wait for it, then append after it.
      const others = Promise.all(
        [1, 2, 3, 4].map((i) =>
          new AskUserStore(drizzle({ client: connection() }), { audit: { key } }).insert(
            pause(`new-${round}-${i}`, { conversationId: 'c-new' }),
          ),
        ),
      );
      await waitForLockWaiters(target.db, 4);
      release();
      await held;
      await others;
    }
    const log = (await entries()).filter((e) => e.chain === 'conversation:c-new');
    expect(log.map((e) => e.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect([log[0]?.token, log[5]?.token]).toEqual(['new-0-0', 'new-1-0']);
    expect(await verifyAudit(target.db, { key })).toMatchObject({ ok: true, problems: [] });
  });
});
