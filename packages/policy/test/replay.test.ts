import { describe, expect, it } from 'vitest';
import { loadPolicySet, type RecordedDecision, replayDecisions } from '../src/index.js';
import { ada, payments, run, tools } from './fixtures.js';

const candidate = loadPolicySet({ tools, sources: [{ name: 'pay.cedar', text: payments }] });
const past = (
  id: string,
  amount: number,
  outcome: RecordedDecision['outcome'],
  answer: RecordedDecision['answer'],
  payee = 'acme',
): RecordedDecision => ({
  id,
  call: { tool: 'pay', input: { amount, payee }, requester: ada, run },
  outcome,
  answer,
});

describe('replaying recorded decisions with a candidate set', () => {
  it('counts the asked calls it would allow, and names those people had refused', () => {
    const recorded = [
      past('q1', 20, 'ask', 'accept'),
      past('q2', 30, 'ask', 'decline'),
      past('q3', 40, 'ask', 'expired'),
      past('q4', 500, 'ask', 'decline'),
      past('c5', 10, 'allow', null),
      past('c6', 10, 'allow', null, 'initech'),
      past('q7', 45, 'ask', null),
    ];
    const summary = replayDecisions(candidate, recorded);
    expect(summary.decided).toBe(7);
    expect(summary.asked).toBe(5);
    expect(summary.askedNowAllowed).toBe(4);
    expect(summary.allowedThoughRefused.map((c) => c.recorded.id)).toEqual(['q2', 'q3']);
    expect(summary.changes.map((c) => [c.recorded.id, c.recorded.outcome, c.now.outcome])).toEqual([
      ['q1', 'ask', 'allow'],
      ['q2', 'ask', 'allow'],
      ['q3', 'ask', 'allow'],
      ['c6', 'allow', 'deny'],
      ['q7', 'ask', 'allow'],
    ]);
    expect(summary.changes[3]?.now).toMatchObject({ ruleIds: ['payee-list'] });
  });

  it('changes nothing on an empty record', () => {
    expect(replayDecisions(candidate, [])).toEqual({
      decided: 0,
      asked: 0,
      askedNowAllowed: 0,
      allowedThoughRefused: [],
      changes: [],
    });
  });
});
