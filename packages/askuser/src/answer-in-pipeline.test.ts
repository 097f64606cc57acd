import type { SqlTarget } from '@internal/pg-test';
import { type Pipeline, pipelinedTransaction, prepareOnce } from '@x/postgres-kit';
import { sql } from 'drizzle-orm';
import { beforeAll, expect, it } from 'vitest';
import { describeOnEachStorage, emptyAll, pause } from '../test/support.js';
import {
  type AnswerOptions,
  AskUserError,
  type AskUserStore,
  exportAudit,
  type ResumeAnswer,
  verifyAudit,
} from './index.js';

const key = 'k'.repeat(32);
const yes: ResumeAnswer = { action: 'accept', content: 'yes' };
const ada: AnswerOptions = { identity: { name: 'ada', roles: ['finance'] }, channel: 'api' };
const bob: AnswerOptions = { identity: { name: 'bob', roles: ['sales'] }, channel: 'api' };

/** A statement of the caller's own, sent in the same flight as the answer's entry. */
const callersWrite = prepareOnce(() => sql`select ${sql.placeholder('n')}::int / 0 as fails`);

async function kinds(db: SqlTarget['db']): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of exportAudit(db)) out.push(`${entry.kind} ${entry.token}`);
  return out;
}

const pending = async (store: AskUserStore, token: string) =>
  store.getByToken(token).then(
    () => true,
    () => false,
  );

await describeOnEachStorage(
  'markResumedIn with an audit key',
  (s) => {
    let target: SqlTarget;
    let store: AskUserStore;
    beforeAll(() => {
      ({ target, store } = s);
    });

    it('answers in the caller’s transaction with its signed entry, which commits with the caller’s writes', async () => {
      await store.insert(pause('t1', { conversationId: 'c1', audience: { roles: ['finance'] } }));
      const outcome = await pipelinedTransaction(target.db, (tx: Pipeline) =>
        store.markResumedIn(tx, 't1', yes, ada),
      );
      expect(outcome).toMatchObject({ resolved: true, question: { conversationId: 'c1' } });
      expect(await pending(store, 't1')).toBe(false);
      expect(await kinds(target.db)).toEqual(['question-created t1', 'question-answered t1']);
      expect(await verifyAudit(target.db, { key })).toMatchObject({ ok: true, entries: 2 });
    });

    it('a failing statement of the caller rolls back the answer and its entry', async () => {
      await store.insert(pause('t2', { conversationId: 'c2' }));
      await expect(
        pipelinedTransaction(target.db, async (tx) => {
          const outcome = await store.markResumedIn(tx, 't2', yes, ada);
          void tx.run(callersWrite, { n: 1 });
          return outcome;
        }),
      ).rejects.toThrow();
      expect(await pending(store, 't2')).toBe(true);
      expect(await kinds(target.db)).toEqual(['question-created t2']);
      // The chain goes on from its last entry: nothing of the rolled-back answer is left.
      await store.markResumed('t2', yes, ada);
      expect(await verifyAudit(target.db, { key })).toMatchObject({ ok: true, entries: 2 });
    });

    it('takes nothing it cannot answer in one statement: markResumed then records the refusal', async () => {
      await store.insert(pause('t3', { conversationId: 'c3', audience: { roles: ['finance'] } }));
      await store.insert(pause('t4', { conversationId: 'c3', quorum: { approvals: 2 } }));
      for (const [token, who] of [
        ['t3', bob],
        ['t4', ada],
        ['unknown', ada],
      ] as const) {
        expect(
          await pipelinedTransaction(target.db, (tx) => store.markResumedIn(tx, token, yes, who)),
        ).toBeUndefined();
      }
      expect(await pending(store, 't3')).toBe(true);
      expect(await kinds(target.db)).toEqual(['question-created t3', 'question-created t4']);
      const refused = await store.markResumed('t3', yes, bob).catch((error: unknown) => error);
      expect(AskUserError.hasCode(refused, 'forbidden')).toBe(true);
      expect((await store.markResumed('t4', yes, ada)).quorum?.approvals).toEqual(['ada']);
      expect((await kinds(target.db)).slice(2)).toEqual([
        'answer-refused t3',
        'approval-recorded t4',
      ]);
    });
  },
  { audit: { key }, empty: emptyAll },
);

await describeOnEachStorage('markResumedIn without an audit key', (s) => {
  let target: SqlTarget;
  let store: AskUserStore;
  beforeAll(() => {
    ({ target, store } = s);
  });

  it('answers once, checks the audience, and counts a quorum’s approval in the same statement', async () => {
    await store.insert(pause('p1', { audience: { roles: ['finance'] } }));
    await store.insert(pause('p2', { quorum: { approvals: 2 } }));
    const answer = (token: string, who: AnswerOptions) =>
      pipelinedTransaction(target.db, (tx) => store.markResumedIn(tx, token, yes, who));
    expect(await answer('p1', bob)).toBeUndefined();
    expect(await answer('p1', ada)).toMatchObject({ resolved: true });
    expect(await answer('p1', ada)).toBeUndefined();
    expect(await answer('p2', ada)).toMatchObject({
      resolved: false,
      quorum: { approvals: ['ada'], needed: 2 },
    });
    // An administrator's answer (no identity) is the plain one-statement answer.
    expect(await answer('p2', { answeredBy: 'root' })).toBeUndefined();
    await store.insert(pause('p3'));
    expect(await answer('p3', { answeredBy: 'root' })).toMatchObject({ resolved: true });
    expect((await store.getAnswer('p3'))?.answeredBy).toBe('root');
  });
});
