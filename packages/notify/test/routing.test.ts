import { describe, expect, it } from 'vitest';
import {
  anyRouteFor,
  channelsFor,
  type NotifyRule,
  parseNotifyRules,
  type RoutedEvent,
  ruleMatches,
} from '../src/index.js';

const KINDS = ['question.created', 'question.answered', 'question.reminded', 'run.failed'];

const question = (tool: string, priority: number, roles: string[] = []): RoutedEvent => ({
  kind: 'question.created',
  question: { tool, priority, audience: { names: [], roles } },
});

describe('routing rules', () => {
  it('reads rules by kind, prefix, tool, priority and audience; refuses what it does not know', () => {
    expect(
      parseNotifyRules('webhook=question.*?tool=approve&priority=5,slack=run.failed', KINDS),
    ).toEqual([
      { channel: 'webhook', kind: 'question.*', tool: 'approve', priority: '5' },
      { channel: 'slack', kind: 'run.failed' },
    ]);
    for (const bad of [
      'sms=*',
      'webhook=question.lost',
      'webhook=job.*',
      'webhook=*?colour=red',
      'webhook',
      'email=run.failed?tool=',
    ]) {
      expect(parseNotifyRules(bad, KINDS), bad).toBeUndefined();
    }
  });

  it('a rule takes the events it names; a priority is a floor, an audience a role or a name', () => {
    const [rule] = parseNotifyRules('webhook=question.*?tool=approve&priority=5', KINDS) ?? [];
    if (!rule) throw new Error('no rule');
    expect(ruleMatches(rule, question('approve', 7))).toBe(true);
    expect(ruleMatches(rule, question('approve', 4))).toBe(false);
    expect(ruleMatches(rule, question('ask_user', 9))).toBe(false);
    expect(ruleMatches(rule, { kind: 'run.failed' })).toBe(false);
    const finance: NotifyRule = { channel: 'email', kind: '*', audience: 'finance' };
    expect(channelsFor([finance], question('approve', 0, ['finance']))).toEqual(['email']);
    expect(channelsFor([finance], question('approve', 0, ['ops']))).toEqual([]);
  });

  it("a question's end goes to Slack when its creation did, so that its message is updated", () => {
    const rules =
      parseNotifyRules('slack=question.created?tool=approve,webhook=run.*', KINDS) ?? [];
    const answered = { ...question('approve', 0), kind: 'question.answered' };
    expect(channelsFor(rules, answered)).toEqual(['slack']);
    expect(channelsFor(rules, { ...question('ask_user', 0), kind: 'question.answered' })).toEqual(
      [],
    );
    expect(channelsFor(rules, { ...question('approve', 0), kind: 'question.reminded' })).toEqual(
      [],
    );
    expect(anyRouteFor(rules, 'question.answered')).toBe(true);
    expect(anyRouteFor(rules, 'question.reminded')).toBe(false);
    expect(anyRouteFor(rules, 'run.failed')).toBe(true);
  });

  it('each channel once, however many rules take the event', () => {
    const rules =
      parseNotifyRules('webhook=*,webhook=question.created,email=question.*', KINDS) ?? [];
    expect(channelsFor(rules, question('approve', 0))).toEqual(['webhook', 'email']);
  });
});
