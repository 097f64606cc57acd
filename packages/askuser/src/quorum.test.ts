import { expect, it } from 'vitest';
import { describeOnEachStorage, emptyAll, pause } from '../test/support.js';
import {
  AskUserError,
  AskUserStore,
  type AuditEntry,
  exportAudit,
  type ResumeAnswer,
  verifyAudit,
} from './index.js';

const key = 'q'.repeat(32);
const yes: ResumeAnswer = { action: 'accept', content: 'yes' };
const no: ResumeAnswer = { action: 'decline', content: 'not now' };
const five = ['ada', 'bob', 'cy', 'dee', 'eve'];

await describeOnEachStorage(
  'a quorum of approvals',
  (s) => {
    const quorum3of5 = (token: string, declines?: number) =>
      pause(token, {
        audience: { names: five, roles: [] },
        quorum: { approvals: 3, ...(declines ? { declines } : {}) },
      });
    const as = (name: string) => ({ identity: { name } });

    it('3 of 5 answering together: recorded once each, resolved exactly once by the third', async () => {
      await s.store.insert(quorum3of5('q1'));
      expect((await s.store.getByToken('q1')).quorum).toEqual({ approvals: 3, declines: 1 });
      const settled = await Promise.allSettled(
        five.map((name) => s.store.markResumed('q1', yes, as(name))),
      );
      // The answers count one after the other: the third resolves it, the two after it are
      // refused as already answered.
      const outcomes = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const refused = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
      expect(outcomes.filter((o) => o.resolved)).toHaveLength(1);
      expect(outcomes).toHaveLength(3);
      expect(refused.every((e) => AskUserError.hasCode(e, 'not_found'))).toBe(true);
      const approvals = await s.store.listApprovals('q1');
      expect(approvals).toHaveLength(3);
      const answered = await s.store.getAnswer('q1');
      const resolver = outcomes.find((o) => o.resolved);
      expect(resolver?.quorum?.approvals).toEqual(approvals.map((a) => a.operator));
      expect(answered?.answer).toEqual(yes);
      expect(approvals.at(-1)?.operator).toBe(answered?.answeredBy);
      // The two after it found the question resolved: refused, and counted nowhere.
      const entries: AuditEntry[] = [];
      for await (const e of exportAudit(s.target.db)) entries.push(e);
      const kinds = entries.filter((e) => e.token === 'q1').map((e) => e.kind);
      expect(kinds.filter((k) => k === 'approval-recorded')).toHaveLength(3);
      expect(kinds.filter((k) => k === 'question-answered')).toHaveLength(1);
      expect(kinds.filter((k) => k === 'answer-refused')).toHaveLength(2);
      expect((await verifyAudit(s.target.db, { key })).ok).toBe(true);
    });

    it('the same person twice counts once; until the quorum the question stays pending', async () => {
      await s.store.insert(quorum3of5('q2'));
      const first = await s.store.markResumed('q2', yes, as('ada'));
      expect(first).toEqual({
        resolved: false,
        quorum: { approvals: ['ada'], declines: [], needed: 3, declinesNeeded: 1, counted: true },
      });
      const again = await Promise.all([
        s.store.markResumed('q2', yes, as('ada')),
        s.store.markResumed('q2', yes, { answeredBy: 'ada' }),
      ]);
      expect(again.map((o) => [o.resolved, o.quorum?.counted, o.quorum?.approvals])).toEqual([
        [false, false, ['ada']],
        [false, false, ['ada']],
      ]);
      expect(await s.store.getAnswer('q2')).toBeUndefined();
      expect((await s.store.listPendingAll()).map((p) => p.token)).toEqual(['q2']);
      await s.store.markResumed('q2', yes, as('bob'));
      // The approvals approve one thing: an accept of other content is refused, not counted.
      const other = await s.store
        .markResumed('q2', { ...yes, content: 'go' }, as('cy'))
        .catch((e) => e);
      expect(AskUserError.hasCode(other, 'invalid_answer')).toBe(true);
      expect(other.message).toContain('must accept the same');
      const last = await s.store.markResumed('q2', yes, as('cy'));
      expect(last.resolved).toBe(true);
      const answered = await s.store.getAnswer('q2');
      expect(answered).toMatchObject({
        answer: { action: 'accept', content: 'yes' },
        answeredBy: 'cy',
      });
      // The last approval returns the question's wait, as a lone answer's UPDATE does.
      expect(last.question).toEqual({
        conversationId: answered?.conversationId,
        toolCallId: answered?.toolCallId,
        kind: answered?.kind,
        priority: answered?.priority,
        createdAt: answered?.createdAt,
        resumedAt: answered?.resumedAt,
        audience: { names: five, roles: [] },
        resumeContext: null,
      });
      expect(first.question).toBeUndefined();
      // Outside the audience, and after the resolution: refused as before.
      await s.store.insert(quorum3of5('q2b'));
      const outside = await s.store.markResumed('q2b', yes, as('mallory')).catch((e) => e);
      expect(AskUserError.hasCode(outside, 'forbidden')).toBe(true);
      const late = await s.store.markResumed('q2', yes, as('dee')).catch((e) => e);
      expect(AskUserError.hasCode(late, 'not_found')).toBe(true);
    });

    it('accepts of different content landing together: the first counts, the others are refused', async () => {
      await s.store.insert(quorum3of5('q5'));
      const outcomes = await Promise.all(
        ['ada', 'bob', 'cy'].map((name) =>
          s.store
            .markResumed('q5', { ...yes, content: `edit by ${name}` }, as(name))
            .then((o) => o.quorum?.counted)
            .catch((e) => (AskUserError.hasCode(e, 'invalid_answer') ? 'refused' : e)),
        ),
      );
      expect(outcomes.filter((o) => o === true)).toHaveLength(1);
      expect(outcomes.filter((o) => o === 'refused')).toHaveLength(2);
      const approvals = await s.store.listApprovals('q5');
      expect(approvals).toHaveLength(1);
      expect(await s.store.getAnswer('q5')).toBeUndefined();
    });

    it('a decline first resolves it as declined; a policy can need as many declines', async () => {
      await s.store.insert(quorum3of5('q3'));
      await s.store.markResumed('q3', yes, as('ada'));
      const declined = await s.store.markResumed('q3', no, as('bob'));
      expect(declined.resolved).toBe(true);
      expect(await s.store.getAnswer('q3')).toMatchObject({ answer: no, answeredBy: 'bob' });

      await s.store.insert(quorum3of5('q4', 2));
      expect((await s.store.markResumed('q4', no, as('ada'))).resolved).toBe(false);
      expect((await s.store.markResumed('q4', no, as('ada'))).quorum?.counted).toBe(false);
      const second = await s.store.markResumed('q4', no, as('bob'));
      expect(second).toMatchObject({ resolved: true, quorum: { declines: ['ada', 'bob'] } });
    });

    it('without an audit log, by the statement that also takes a lone answer: 3 of 5 together resolve once, a repeat counts once, other content and outsiders are refused, a decline resolves', async () => {
      const unaudited = new AskUserStore(s.target.db);
      await unaudited.insert(quorum3of5('q6'));
      const settled = await Promise.allSettled(
        five.map((name) => unaudited.markResumed('q6', yes, as(name))),
      );
      const outcomes = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      expect(outcomes.filter((o) => o.resolved)).toHaveLength(1);
      expect(outcomes).toHaveLength(3);
      const resolver = outcomes.find((o) => o.resolved);
      const approvals = await unaudited.listApprovals('q6');
      expect(resolver).toMatchObject({
        quorum: { approvals: approvals.map((a) => a.operator), needed: 3, counted: true },
        question: { conversationId: (await unaudited.getAnswer('q6'))?.conversationId },
      });
      expect((await unaudited.getAnswer('q6'))?.answeredBy).toBe(approvals.at(-1)?.operator);

      await unaudited.insert(quorum3of5('q7'));
      expect(await unaudited.markResumed('q7', yes, as('ada'))).toEqual({
        resolved: false,
        quorum: { approvals: ['ada'], declines: [], needed: 3, declinesNeeded: 1, counted: true },
      });
      expect((await unaudited.markResumed('q7', yes, as('ada'))).quorum?.counted).toBe(false);
      const other = await unaudited
        .markResumed('q7', { action: 'accept', content: 'other' }, as('bob'))
        .catch((e) => e);
      expect(AskUserError.hasCode(other, 'invalid_answer')).toBe(true);
      const outsider = await unaudited.markResumed('q7', yes, as('zed')).catch((e) => e);
      expect(AskUserError.hasCode(outsider, 'forbidden')).toBe(true);
      expect(await unaudited.markResumed('q7', no, as('bob'))).toMatchObject({
        resolved: true,
        quorum: { approvals: ['ada'], declines: ['bob'], counted: true },
      });
      expect(await unaudited.getAnswer('q7')).toMatchObject({ answer: no, answeredBy: 'bob' });
      expect((await unaudited.listApprovals('q7')).map((a) => a.operator)).toEqual(['ada', 'bob']);
    });

    it('an answer must say who gives it, and a batch does not answer a quorum', async () => {
      await s.store.insert(quorum3of5('q5'));
      const plain = new AskUserStore(s.target.db);
      const anonymous = await plain.markResumed('q5', yes).catch((e) => e);
      expect(AskUserError.hasCode(anonymous, 'invalid_argument')).toBe(true);
      expect((await plain.markResumed('q5', yes, { answeredBy: 'ada' })).resolved).toBe(false);
      const batch = await plain
        .markResumedBatch({ q5: yes }, { answeredBy: 'bob' })
        .catch((e) => e);
      expect(AskUserError.hasCode(batch, 'invalid_answer')).toBe(true);
      expect(await plain.listApprovals('q5')).toMatchObject([
        { operator: 'ada', action: 'accept' },
      ]);
    });
  },
  { audit: { key }, empty: emptyAll },
);
