import type { SqlTarget } from '@internal/pg-test';
import { sql } from 'drizzle-orm';
import { beforeAll, expect, it } from 'vitest';
import { describeOnEachStorage, pause, query } from '../test/support.js';
import { AskUserError, type AskUserStore, type Identity, type ResumeAnswer } from './index.js';

const yes: ResumeAnswer = { action: 'accept', content: 'yes' };
const ada: Identity = { name: 'ada', roles: ['operator'] };
const bob: Identity = { name: 'bob', roles: ['operator', 'finance'] };
const eve: Identity = { name: 'eve' };

await describeOnEachStorage('audience and requester', (s) => {
  let target: SqlTarget;
  let store: AskUserStore;
  beforeAll(() => {
    ({ target, store } = s);
  });

  async function answerable(identity: Identity): Promise<string[]> {
    return (await store.listAnswerable(identity, 1000)).map((p) => p.token);
  }

  it('stores the audience and requester as plain fields; omitted means anyone, no requester', async () => {
    await store.insert(pause('open'));
    await store.insert(
      pause('pay', {
        audience: { names: ['ada'], roles: ['finance'] },
        requester: 'eve',
        requesterMayNotAnswer: true,
      }),
    );
    const [open, pay] = await store.listPendingAll();
    expect(open).toMatchObject({
      token: 'open',
      audience: { names: [], roles: [] },
      requester: null,
      requesterMayNotAnswer: false,
    });
    expect(pay).toMatchObject({
      token: 'pay',
      audience: { names: ['ada'], roles: ['finance'] },
      requester: 'eve',
      requesterMayNotAnswer: true,
    });
  });

  it('refuses a malformed audience or requester with invalid_pause and stores nothing', async () => {
    for (const extra of [
      { audience: { names: [''] } },
      { audience: { roles: 'finance' } },
      { audience: { groups: ['x'] } },
      { requester: '' },
    ]) {
      const error = await store.insert(pause('bad', extra as never)).catch((e) => e);
      expect(AskUserError.hasCode(error, 'invalid_pause'), JSON.stringify(extra)).toBe(true);
    }
    expect(await store.listPendingAll()).toEqual([]);
  });

  it('lists what an identity may answer: open questions, its name, its roles, in FIFO order', async () => {
    await store.insert(pause('q-open', { priority: 0 }));
    await store.insert(pause('q-ada', { audience: { names: ['ada'] }, priority: 2 }));
    await store.insert(pause('q-finance', { audience: { roles: ['finance'] }, priority: 5 }));
    await store.insert(
      pause('q-both', { audience: { names: ['ada'], roles: ['finance'] }, priority: 1 }),
    );
    await store.insert(pause('q-carol', { audience: { names: ['carol'] } }));
    expect(await answerable(ada)).toEqual(['q-ada', 'q-both', 'q-open']);
    expect(await answerable(bob)).toEqual(['q-finance', 'q-both', 'q-open']);
    expect(await answerable(eve)).toEqual(['q-open']);
    expect((await store.listAnswerable(bob, 2)).map((p) => p.token)).toEqual([
      'q-finance',
      'q-both',
    ]);
    // A question answered leaves every list.
    await store.markResumed('q-both', yes, { identity: ada });
    expect(await answerable(bob)).toEqual(['q-finance', 'q-open']);
  });

  it('leaves out the questions an identity requested when their requester may not answer', async () => {
    await store.insert(pause('mine-sod', { requester: 'ada', requesterMayNotAnswer: true }));
    await store.insert(pause('mine-ok', { requester: 'ada' }));
    await store.insert(pause('theirs', { requester: 'bob', requesterMayNotAnswer: true }));
    expect((await answerable(ada)).sort()).toEqual(['mine-ok', 'theirs']);
    expect((await answerable(bob)).sort()).toEqual(['mine-ok', 'mine-sod']);
  });

  it('accepts an answer by a name or a role of the audience, recording who answered', async () => {
    await store.insert(pause('by-name', { audience: { names: ['ada'] } }));
    await store.insert(pause('by-role', { audience: { roles: ['finance'] } }));
    await store.insert(pause('by-anyone'));
    await store.markResumed('by-name', yes, { identity: ada });
    await store.markResumed('by-role', yes, { identity: bob });
    await store.markResumed('by-anyone', yes, { identity: eve, answeredBy: 'eve@example' });
    expect((await store.getAnswer('by-name'))?.answeredBy).toBe('ada');
    expect((await store.getAnswer('by-role'))?.answeredBy).toBe('bob');
    expect((await store.getAnswer('by-anyone'))?.answeredBy).toBe('eve@example');
  });

  it('refuses an identity outside the audience with forbidden, and changes nothing', async () => {
    await store.insert(pause('pay', { audience: { names: ['ada'], roles: ['finance'] } }));
    const error = await store.markResumed('pay', yes, { identity: eve }).catch((e) => e);
    expect(AskUserError.hasCode(error, 'forbidden')).toBe(true);
    expect(error.tokens).toEqual(['pay']);
    expect(error.message).toContain('audience does not include eve');
    const roleless = await store
      .markResumed('pay', yes, { identity: { name: 'mallory', roles: ['operator'] } })
      .catch((e) => e);
    expect(AskUserError.hasCode(roleless, 'forbidden')).toBe(true);
    expect((await store.getByToken('pay')).token).toBe('pay');
    const rows = await query(
      target.db,
      sql`select resumed_at, answered_by from aura.paused_states where token = 'pay'`,
    );
    expect(rows).toEqual([{ resumed_at: null, answered_by: null }]);
  });

  it('separation of duties: the requester may not answer, anyone else of the audience may', async () => {
    await store.insert(
      pause('expense', {
        audience: { roles: ['finance'] },
        requester: 'bob',
        requesterMayNotAnswer: true,
      }),
    );
    const error = await store.markResumed('expense', yes, { identity: bob }).catch((e) => e);
    expect(AskUserError.hasCode(error, 'forbidden')).toBe(true);
    expect(error.message).toContain('bob asked for it');
    await store.markResumed('expense', yes, { identity: { name: 'cy', roles: ['finance'] } });
    expect((await store.getAnswer('expense'))?.answeredBy).toBe('cy');
    // Without the flag the requester may answer their own question.
    await store.insert(pause('own', { requester: 'bob' }));
    await store.markResumed('own', yes, { identity: bob });
    expect((await store.getAnswer('own'))?.answeredBy).toBe('bob');
  });

  it('an answer without identity is an administrator’s: no audience is checked, as before', async () => {
    await store.insert(
      pause('locked', {
        audience: { names: ['ada'] },
        requester: 'x',
        requesterMayNotAnswer: true,
      }),
    );
    await store.markResumed('locked', yes, { answeredBy: 'root' });
    expect((await store.getAnswer('locked'))?.answeredBy).toBe('root');
  });

  it('an already answered question is not_found for an identity, whatever its audience', async () => {
    await store.insert(pause('done', { audience: { names: ['ada'] } }));
    await store.markResumed('done', yes, { identity: ada });
    for (const who of [ada, eve]) {
      const error = await store.markResumed('done', yes, { identity: who }).catch((e) => e);
      expect(AskUserError.hasCode(error, 'not_found')).toBe(true);
    }
    const unknown = await store.markResumed('ghost', yes, { identity: ada }).catch((e) => e);
    expect(AskUserError.hasCode(unknown, 'not_found')).toBe(true);
  });

  it('refuses a malformed identity with invalid_argument', async () => {
    await store.insert(pause('q'));
    for (const identity of [{ name: '' }, { name: 'a', roles: [''] }, { name: 'a', x: 1 }]) {
      const error = await store
        .markResumed('q', yes, { identity: identity as Identity })
        .catch((e) => e);
      expect(AskUserError.hasCode(error, 'invalid_argument'), JSON.stringify(identity)).toBe(true);
      const listed = await store.listAnswerable(identity as Identity).catch((e) => e);
      expect(AskUserError.hasCode(listed, 'invalid_argument')).toBe(true);
    }
    expect((await store.getByToken('q')).token).toBe('q');
  });

  it('keeps pending_audience to pending questions with an audience: resolved by any path, they leave it', async () => {
    await store.insert(pause('a1', { conversationId: 'c-a', audience: { roles: ['r'] } }));
    await store.insert(pause('a2', { conversationId: 'c-b', audience: { names: ['n', 'm'] } }));
    await store.insert(pause('a3', { conversationId: 'c-b' }));
    const count = async () =>
      Number(
        (await query(target.db, sql`select count(*)::int as n from aura.pending_audience`))[0]?.n,
      );
    // a3 is open to anyone: no row, and still listed for anyone.
    expect(await count()).toBe(3);
    expect((await store.listAnswerable({ name: 'zed' })).map((p) => p.token)).toEqual(['a3']);
    await store.markResumedBatch({ a1: yes });
    expect(await count()).toBe(2);
    await store.markResumed('a2', yes, { identity: { name: 'n' } });
    expect(await count()).toBe(0);
    await store.autoResolveForConversation('c-b');
    expect(await store.listAnswerable({ name: 'zed' })).toEqual([]);
  });
});
