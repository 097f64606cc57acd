import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  answerBodySchema,
  answerSchemasWith,
  batchBodySchema,
  MAX_BATCH,
  policiesResponseSchema,
  signInBodySchema,
  startRunBodySchema,
  stopBodySchema,
} from '../src/contract/index.js';
import * as root from '../src/index.js';

describe('the request bodies', () => {
  it('take an answer with or without content, and refuse another action or an unknown field', () => {
    expect(answerBodySchema.parse({ action: 'decline' })).toEqual({
      action: 'decline',
      content: '',
    });
    expect(answerBodySchema.parse({ action: 'accept', content: 'yes' }).content).toBe('yes');
    expect(answerBodySchema.safeParse({ action: 'approve' }).success).toBe(false);
    expect(answerBodySchema.safeParse({ action: 'accept', by: 'ann' }).success).toBe(false);
    expect(answerBodySchema.safeParse({ action: 'accept', content: 1 }).success).toBe(false);
  });

  it('take a batch of 1 to MAX_BATCH answers, each naming its question', () => {
    const one = { token: 't1', action: 'cancel' };
    expect(batchBodySchema.parse({ answers: [one] }).answers).toEqual([{ ...one, content: '' }]);
    expect(batchBodySchema.safeParse({ answers: [] }).success).toBe(false);
    expect(batchBodySchema.safeParse({ answers: Array(MAX_BATCH).fill(one) }).success).toBe(true);
    expect(batchBodySchema.safeParse({ answers: Array(MAX_BATCH + 1).fill(one) }).success).toBe(
      false,
    );
    expect(batchBodySchema.safeParse({ answers: [{ action: 'accept' }] }).success).toBe(false);
    expect(batchBodySchema.safeParse({ answers: [{ ...one, token: '' }] }).success).toBe(false);
  });

  it("check content with the server's own schema in both answer bodies", () => {
    const short = z.string().max(3, 'too long');
    const { answer, batch } = answerSchemasWith(short);
    expect(answer.parse({ action: 'accept' }).content).toBe('');
    expect(answer.safeParse({ action: 'accept', content: 'four' }).error?.issues[0]?.message).toBe(
      'too long',
    );
    const entry = { token: 't', action: 'accept', content: 'four' };
    expect(batch.safeParse({ answers: [entry] }).error?.issues[0]?.path).toEqual([
      'answers',
      0,
      'content',
    ]);
  });

  it('take a sign-in key with an optional name, a stop with nothing, a run with its goal trimmed', () => {
    expect(signInBodySchema.parse({ key: 'k' })).toEqual({ key: 'k' });
    expect(signInBodySchema.safeParse({ key: '' }).success).toBe(false);
    expect(signInBodySchema.safeParse({ key: 'k', name: '' }).success).toBe(false);
    expect(stopBodySchema.parse({})).toEqual({});
    expect(stopBodySchema.safeParse({ force: true }).success).toBe(false);
    expect(startRunBodySchema.parse({ goal: '  plan it ', conversation: 'c1' })).toEqual({
      goal: 'plan it',
      conversation: 'c1',
      replace: false,
    });
    expect(startRunBodySchema.safeParse({ goal: '   ', conversation: 'c1' }).success).toBe(false);
    expect(
      startRunBodySchema.safeParse({ goal: 'x'.repeat(32 * 1024 + 1), conversation: 'c' }).success,
    ).toBe(false);
  });

  it('are exported from the root too', () => {
    expect(root.answerBodySchema).toBe(answerBodySchema);
    expect(root.startRunBodySchema).toBe(startRunBodySchema);
  });
});

describe('the Policies response schema', () => {
  const rule = {
    id: 'pay-over-1000',
    outcome: 'ask',
    denial: 'soft',
    reason: 'payments over 1,000 need two of finance',
    audience: { names: [], roles: ['finance'] },
    quorum: { approvals: 2, declines: 1 },
    deadline: null,
    remindMs: null,
    escalate: null,
    requesterMayNotAnswer: true,
    severity: 'high',
    location: { file: 'payments.cedar', line: 4 },
    decided: { allow: 0, deny: 0, ask: 3 },
  };
  const response = {
    policySet: { hash: 'sha256:ab', rules: [rule] },
    days: 7,
    since: '2026-12-01T00:00:00.000Z',
    otherRules: [],
    withoutRule: { allow: 0, deny: 0, ask: 0 },
    shadow: null,
  };

  it('takes a response as the server sends it, and refuses an unknown field or a count below 0', () => {
    expect(policiesResponseSchema.parse(response)).toEqual(response);
    expect(policiesResponseSchema.safeParse({ ...response, extra: 1 }).success).toBe(false);
    const negative = { ...rule, decided: { allow: -1, deny: 0, ask: 0 } };
    const bad = { ...response, policySet: { hash: 'sha256:ab', rules: [negative] } };
    expect(policiesResponseSchema.safeParse(bad).success).toBe(false);
  });
});
