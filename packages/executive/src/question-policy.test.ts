import { describe, expect, it } from 'vitest';
import {
  deadlineFor,
  NO_QUESTION_POLICY,
  type QuestionPolicy,
  questionAnswerers,
  questionTimes,
} from './index.js';

const now = Date.parse('2026-12-01T12:00:00Z');
const policy: QuestionPolicy = (kind) =>
  kind === 'approve'
    ? {
        audience: ['finance', 'ops'],
        requesterMayNotApprove: true,
        deadline: { ms: 3_600_000, answer: { action: 'decline', content: '' } },
        remindMs: 600_000,
        escalate: { ms: 1_800_000, names: ['ada'], roles: ['lead'] },
        quorum: { approvals: 2, declines: 1 },
      }
    : {};

describe('a question policy', () => {
  it("narrows the audience to the model's roles it names, never widens it, and bars the requester", () => {
    const approve = { kind: 'approve' as const };
    expect(questionAnswerers(approve, 'bob', policy)).toEqual({
      audience: { names: [], roles: ['finance', 'ops'] },
      requester: 'bob',
      requesterMayNotAnswer: true,
    });
    const named = { ...approve, audience: { names: ['eve'], roles: ['ops', 'hr'] } };
    expect(questionAnswerers(named, undefined, policy)).toEqual({
      audience: { names: [], roles: ['ops'] },
      requester: null,
      requesterMayNotAnswer: false,
    });
    const outside = { ...approve, audience: { names: ['eve'], roles: ['hr'] } };
    expect(questionAnswerers(outside, 'bob', policy).audience.roles).toEqual(['finance', 'ops']);
    const free = { kind: 'ask_user' as const, audience: { names: ['eve'], roles: [] } };
    expect(questionAnswerers(free, 'bob', policy)).toEqual({
      audience: { names: ['eve'], roles: [] },
      requester: 'bob',
      requesterMayNotAnswer: false,
    });
  });

  it("sets a question's times and quorum, its run due at the earliest; none without rules", () => {
    expect(questionTimes({ kind: 'approve' }, policy, now)).toEqual({
      deadline: { at: new Date(now + 3_600_000), answer: { action: 'decline', content: '' } },
      remind: { at: new Date(now + 600_000) },
      escalate: { at: new Date(now + 1_800_000), names: ['ada'], roles: ['lead'] },
      quorum: { approvals: 2, declines: 1 },
      dueAt: new Date(now + 600_000),
    });
    expect(questionTimes({ kind: 'ask_user' }, policy, now)).toEqual({});
    expect(questionTimes({ kind: 'approve' }, NO_QUESTION_POLICY, now)).toEqual({});
  });

  it("takes the model's own deadline when it comes before the policy's", () => {
    const soon = { at: new Date(now + 60_000), answer: { action: 'cancel' as const, content: '' } };
    const late = { ...soon, at: new Date(now + 7_200_000) };
    expect(deadlineFor({ kind: 'approve', deadline: soon }, policy, now)).toEqual(soon);
    expect(deadlineFor({ kind: 'approve', deadline: late }, policy, now)).toEqual({
      at: new Date(now + 3_600_000),
      answer: { action: 'decline', content: '' },
    });
    expect(deadlineFor({ kind: 'ask_user', deadline: late }, policy, now)).toEqual(late);
    expect(questionTimes({ kind: 'ask_user', deadline: late }, policy, now).dueAt).toEqual(late.at);
  });
});
