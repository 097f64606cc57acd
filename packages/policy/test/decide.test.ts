import { describe, expect, it } from 'vitest';
import { type DecisionInput, loadPolicySet } from '../src/index.js';
import { ada, payments, run, tools } from './fixtures.js';

const paySet = () => loadPolicySet({ tools, sources: [{ name: 'pay.cedar', text: payments }] });
const pay = (input: unknown, extra: Partial<DecisionInput> = {}) =>
  paySet().decide({ tool: 'pay', input, requester: ada, run, ...extra });

describe('the payment example', () => {
  it('allows a small payment with no person, recording the reason and the rule', () => {
    const policies = paySet();
    const decision = policies.decide({
      tool: 'pay',
      input: { amount: 20, payee: 'acme' },
      requester: ada,
      run,
    });
    expect(decision).toEqual({
      outcome: 'allow',
      reason: 'rule "pay-small": payments under 50 need nobody',
      ruleIds: ['pay-small'],
      policyHash: policies.hash,
    });
  });

  it('asks one of finance within an hour for a medium payment, declining by default', () => {
    const decision = pay({ amount: 500, payee: 'acme' });
    expect(decision).toMatchObject({
      outcome: 'ask',
      reason: 'rule "pay-medium": payments of 50 to 1,000 need one of finance',
      ruleIds: ['pay-medium'],
      error: null,
      ask: {
        audience: { names: [], roles: ['finance'] },
        quorum: null,
        deadline: { ms: 3_600_000, answer: { action: 'decline', content: '' } },
        requesterMayNotAnswer: false,
      },
    });
  });

  it('asks two of finance, never the requester, for a payment over 1,000', () => {
    const decision = pay({ amount: 5000, payee: 'globex' });
    expect(decision).toMatchObject({
      outcome: 'ask',
      ruleIds: ['pay-over-1000'],
      ask: { quorum: { approvals: 2, declines: 1 }, requesterMayNotAnswer: true, severity: 'high' },
    });
  });

  it('denies a payee outside the list, before any allow or ask', () => {
    for (const amount of [20, 500, 5000]) {
      expect(pay({ amount, payee: 'evil corp' })).toMatchObject({
        outcome: 'deny',
        reason: 'rule "payee-list": the payee is not on the list',
        ruleIds: ['payee-list'],
      });
    }
  });
});

describe('combining the rules that match', () => {
  const combined = `
@id("a") @ask @audience("finance+@ada") @quorum("2:3") @deadline("2h") @default("accept:go ahead")
@remind("30m") @escalate("4h:lead") @severity("low")
permit (principal, action == Action::"pay", resource);

@id("b") @ask @audience("legal") @quorum("3:2") @deadline("1h") @default("cancel")
@remind("45m") @escalate("3h:@bob") @requesterMayNotAnswer @severity("critical")
permit (principal, action == Action::"pay", resource) when { context.input.amount > 100 };

@id("c") @ask @deadline("1h") @default("decline")
permit (principal, action == Action::"pay", resource) when { context.input.amount > 1000 };

@id("d") @reason("allowed too")
permit (principal, action == Action::"pay", resource);
`;
  const set = () => loadPolicySet({ tools, sources: [{ name: 'combined.cedar', text: combined }] });
  const decide = (amount: number) =>
    set().decide({ tool: 'pay', input: { amount, payee: 'acme' }, requester: ada, run });

  it('asks when an asking rule and an allowing rule both match: ask before allow', () => {
    expect(decide(10)).toMatchObject({ outcome: 'ask', ruleIds: ['a'] });
  });

  it('takes the union of audiences, the largest quorum, the shortest deadline and the earliest times', () => {
    const decision = decide(500);
    expect(decision.outcome).toBe('ask');
    if (decision.outcome !== 'ask') return;
    expect(decision.ruleIds).toEqual(['a', 'b']);
    expect(decision.reason).toBe('rule "a": asks; rule "b": asks');
    expect(decision.ask).toEqual({
      audience: { names: ['ada'], roles: ['finance', 'legal'] },
      quorum: { approvals: 3, declines: 2 },
      deadline: { ms: 3_600_000, answer: { action: 'cancel', content: '' } },
      remindMs: 1_800_000,
      escalate: { ms: 10_800_000, names: ['bob'], roles: ['lead'] },
      requesterMayNotAnswer: true,
      severity: 'critical',
    });
  });

  it('breaks a tie between deadlines with the most cautious default: decline', () => {
    const decision = decide(5000);
    expect(decision).toMatchObject({
      outcome: 'ask',
      ruleIds: ['a', 'b', 'c'],
      ask: { deadline: { ms: 3_600_000, answer: { action: 'decline', content: '' } } },
    });
  });

  it('asks any operator when no rule matches, or denies with unmatched: deny', () => {
    const none = {
      tools,
      sources: [
        { name: 'none.cedar', text: 'forbid (principal, action == Action::"ask_user", resource);' },
      ],
    };
    const call = { tool: 'pay', input: { amount: 1, payee: 'acme' }, requester: ada, run };
    expect(loadPolicySet(none).decide(call)).toMatchObject({
      outcome: 'ask',
      reason: 'no rule matched',
      ruleIds: [],
      ask: { audience: { names: [], roles: [] }, quorum: null, deadline: null },
    });
    expect(loadPolicySet({ ...none, unmatched: 'deny' }).decide(call)).toMatchObject({
      outcome: 'deny',
      reason: 'no rule matched',
    });
  });
});

describe('what the rules see', () => {
  const text = `
@id("finance-self") @reason("finance may pay")
permit (principal in Role::"finance", action == Action::"pay", resource);

@id("night") @reason("no payments at night")
forbid (principal, action == Action::"pay", resource) when { context.time.hour < 6 };

@id("weekend") @reason("no payments on Sundays")
forbid (principal, action == Action::"pay", resource) when { context.time.weekday == 7 };

@id("too-many") @reason("this run asked three times already")
forbid (principal, action, resource) when { context.counters.questions >= 3 };

@id("batch") @reason("batch runs may not pay")
forbid (principal, action == Action::"pay", resource) when { resource.kind == "batch" };

@id("anonymous") @reason("a payment needs a requester")
forbid (principal == User::"", action == Action::"pay", resource);

@id("fee") @reason("fees over 2.5 are refused")
forbid (principal, action == Action::"pay", resource)
when { context.input has fee && context.input.fee.greaterThan(decimal("2.5")) };
`;
  const set = () => loadPolicySet({ tools, sources: [{ name: 'see.cedar', text }] });
  const monday = new Date('2026-12-07T12:00:00Z');
  const call = (extra: Partial<DecisionInput> = {}): DecisionInput => ({
    tool: 'pay',
    input: { amount: 10, payee: 'acme' },
    requester: { name: 'fin', roles: ['finance'] },
    run,
    time: monday,
    ...extra,
  });

  it('sees the requester, the run, the time, the counters and the arguments', () => {
    const policies = set();
    const rule = (extra: Partial<DecisionInput>) => policies.decide(call(extra)).ruleIds;
    expect(policies.decide(call())).toMatchObject({ outcome: 'allow', ruleIds: ['finance-self'] });
    expect(policies.decide(call({ requester: ada }))).toMatchObject({
      outcome: 'ask',
      ruleIds: [],
    });
    expect(rule({ time: new Date('2026-12-07T03:00:00Z') })).toEqual(['night']);
    expect(rule({ time: new Date('2026-12-06T12:00:00Z') })).toEqual(['weekend']);
    expect(rule({ counters: { questions: 3 } })).toEqual(['too-many']);
    expect(rule({ run: { ...run, kind: 'batch' } })).toEqual(['batch']);
    expect(rule({ requester: null })).toEqual(['anonymous']);
    expect(rule({ input: { amount: 10, payee: 'acme', fee: 2.75 } })).toEqual(['fee']);
    expect(rule({ input: { amount: 10, payee: 'acme', fee: 2.5 } })).toEqual(['finance-self']);
  });
});

describe('a call whose arguments do not match its tool', () => {
  it.each([
    [{ amount: '5', payee: 'acme' }, 'input.amount: expected an integer, got "5"'],
    [{ amount: 1.5, payee: 'acme' }, 'input.amount: expected an integer, got 1.5'],
    [{ amount: -1, payee: 'acme' }, 'input.amount: expected 0 to Infinity, got -1'],
    [{ payee: 'acme' }, 'input.amount: is required'],
    [{ amount: 1, payee: 'acme', to: 'x' }, 'input."to": is not a property of the tool'],
    [
      { amount: 1, payee: 'acme', fee: 0.00001 },
      'input.fee: 0.00001 is not a decimal policies can compare (at most 4 places)',
    ],
    [{ amount: 1, payee: 'acme', memo: 7 }, 'input.memo: expected a string, got 7'],
    [['not', 'an', 'object'], 'input: expected an object, got ["not","an","object"]'],
  ])('denies %j with why', (input, why) => {
    expect(pay(input)).toMatchObject({
      outcome: 'deny',
      reason: `the arguments do not match the tool's schema: ${why}`,
      ruleIds: [],
    });
  });

  it('takes null for an optional nullable argument', () => {
    expect(pay({ amount: 10, payee: 'acme', memo: null })).toMatchObject({ outcome: 'allow' });
  });

  it('escapes control characters of a shown argument', () => {
    const decision = pay({ amount: 'ten\u001b[31m\nred', payee: 'acme' });
    expect(decision.reason).toContain('"ten\\u001b[31m\\nred"');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
    expect(decision.reason).not.toMatch(/[\u0000-\u001f]/);
  });

  it('denies a call of a tool the policies do not know', () => {
    expect(paySet().decide({ tool: 'wire', input: {}, requester: ada, run })).toMatchObject({
      outcome: 'deny',
      reason: 'no tool "wire" is known to the policies',
    });
    expect(paySet().decide({ tool: 'w\u001bire', input: {}, requester: ada, run }).reason).toBe(
      'no tool "w\\u001bire" is known to the policies',
    );
  });
});

describe('an error while deciding', () => {
  const overflow = `
@id("overflow") @reason("big")
permit (principal, action == Action::"pay", resource)
when { context.input.amount * 1000000000000 > 0 };
`;
  const forbidOverflow = `
@id("all") permit (principal, action, resource);
@id("overflow-forbid")
forbid (principal, action == Action::"pay", resource)
when { context.input.amount * 1000000000000 > 0 };
`;
  const decideWith = (text: string) =>
    loadPolicySet({ tools, sources: [{ name: 'err.cedar', text }], adminRole: 'ops-admin' }).decide(
      {
        tool: 'pay',
        input: { amount: 9_000_000_000, payee: 'acme' },
        requester: ada,
        run,
      },
    );

  it('asks the admins when the call itself is malformed (no run, an invalid time)', () => {
    const policies = loadPolicySet({
      tools,
      sources: [{ name: 'all.cedar', text: '@id("all") permit (principal, action, resource);' }],
    });
    const input = { amount: 1, payee: 'acme' };
    const noRun = policies.decide({ tool: 'pay', input, requester: ada, run: undefined as never });
    const badTime = policies.decide({
      tool: 'pay',
      input,
      requester: ada,
      run,
      time: new Date(Number.NaN),
    });
    for (const decision of [noRun, badTime]) {
      expect(decision).toMatchObject({
        outcome: 'ask',
        ask: { audience: { names: [], roles: ['admin'] } },
      });
      expect(decision.outcome === 'ask' && decision.error).toBeTruthy();
    }
  });

  it('asks the admins with the error, and never allows', () => {
    for (const text of [overflow, forbidOverflow]) {
      const decision = decideWith(text);
      expect(decision.outcome).toBe('ask');
      if (decision.outcome !== 'ask') return;
      expect(decision.ask.audience).toEqual({ names: [], roles: ['ops-admin'] });
      expect(decision.ask.requesterMayNotAnswer).toBe(true);
      expect(decision.ask.deadline).toBeNull();
      expect(decision.error).toMatch(/overflow/);
      expect(decision.reason).toMatch(
        /^deciding failed, so the admins are asked: rule "overflow(-forbid)?": /,
      );
    }
  });
});

describe('rules scoped to several tools, or to any', () => {
  it('match each tool they name, and every tool when they name none', () => {
    const text = `
@id("both") @ask permit (principal, action in [Action::"pay", Action::"ask_user"], resource);
@id("one") @ask permit (principal, action in Action::"ask_user", resource);
@id("any") @reason("any tool") permit (principal, action, resource);
`;
    const policies = loadPolicySet({ tools, sources: [{ name: 'scopes.cedar', text }] });
    const decide = (tool: string, input: unknown) =>
      policies.decide({ tool, input, requester: ada, run });
    expect(decide('pay', { amount: 1, payee: 'acme' }).ruleIds).toEqual(['both']);
    expect(decide('ask_user', { question: 'q' }).ruleIds).toEqual(['both', 'one']);
    const onlyAny = loadPolicySet({
      tools,
      sources: [{ name: 'any.cedar', text: '@id("any") permit (principal, action, resource);' }],
    });
    expect(
      onlyAny.decide({ tool: 'ask_user', input: { question: 'q' }, requester: ada, run }).ruleIds,
    ).toEqual(['any']);
  });
});
