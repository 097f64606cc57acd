import { describe, expect, it } from 'vitest';
import { compileShortForm, loadPolicySet, PolicyError, type ShortForm } from '../src/index.js';
import { ada, run, tools } from './fixtures.js';

const approve = {
  name: 'approve',
  inputSchema: {
    type: 'object',
    properties: { summary: { type: 'string' } },
    required: ['summary'],
  },
};
const allTools = [...tools, approve];

// The parsed pairs of RUNNER_AUDIENCE=approve=finance,approve=ops RUNNER_QUORUM=approve=2
// RUNNER_DEADLINE=approve=24h:decline,ask_user=2h:accept:go on without me RUNNER_REMIND=approve=4h
// RUNNER_ESCALATE=approve=8h:lead+@ada RUNNER_REQUESTER_MAY_NOT_APPROVE=approve
const short: ShortForm = {
  audience: { approve: ['finance', 'ops'] },
  requesterMayNotApprove: new Set(['approve']),
  deadline: {
    approve: { ms: 86_400_000, answer: { action: 'decline', content: '' } },
    ask_user: { ms: 7_200_000, answer: { action: 'accept', content: 'go on without me' } },
  },
  remind: { approve: 14_400_000 },
  escalate: { approve: { ms: 28_800_000, names: ['ada'], roles: ['lead'] } },
  quorum: { approve: { approvals: 2, declines: 1 } },
};

describe('the short form', () => {
  it('compiles into one asking rule per tool, as the README shows', () => {
    expect(compileShortForm(short)).toBe(`@id("short-form:approve")
@ask
@audience("finance+ops")
@quorum("2:1")
@deadline("1d")
@default("decline")
@remind("4h")
@escalate("8h:lead+@ada")
@requesterMayNotAnswer
permit (principal, action == Action::"approve", resource);

@id("short-form:ask_user")
@ask
@deadline("2h")
@default("accept:go on without me")
permit (principal, action == Action::"ask_user", resource);
`);
  });

  it('decides as the variables did, in the same set as the files', () => {
    const policies = loadPolicySet({
      tools: allTools,
      shortForm: short,
      sources: [
        {
          name: 'pay.cedar',
          text: '@id("pay") permit (principal, action == Action::"pay", resource);',
        },
      ],
    });
    const decide = (tool: string, input: unknown) =>
      policies.decide({ tool, input, requester: ada, run });
    expect(decide('approve', { summary: 'deploy' })).toEqual({
      outcome: 'ask',
      reason: 'rule "short-form:approve": asks',
      ruleIds: ['short-form:approve'],
      policyHash: policies.hash,
      error: null,
      ask: {
        audience: { names: [], roles: ['finance', 'ops'] },
        quorum: { approvals: 2, declines: 1 },
        deadline: { ms: 86_400_000, answer: { action: 'decline', content: '' } },
        remindMs: 14_400_000,
        escalate: { ms: 28_800_000, names: ['ada'], roles: ['lead'] },
        requesterMayNotAnswer: true,
        severity: null,
      },
    });
    expect(decide('ask_user', { question: 'which?' })).toMatchObject({
      outcome: 'ask',
      ask: {
        deadline: { ms: 7_200_000, answer: { action: 'accept', content: 'go on without me' } },
      },
    });
    expect(decide('pay', { amount: 1, payee: 'acme' })).toMatchObject({
      outcome: 'allow',
      ruleIds: ['pay'],
    });
    expect(policies.rules.map((rule) => rule.location.file)).toEqual([
      'pay.cedar',
      'short-form',
      'short-form',
    ]);
  });

  it('bars the requester of every tool with *', () => {
    const text = compileShortForm({ requesterMayNotApprove: ['*'] });
    expect(text).toBe(
      '@id("short-form:*")\n@ask\n@requesterMayNotAnswer\npermit (principal, action, resource);\n',
    );
    const policies = loadPolicySet({
      tools: allTools,
      shortForm: { requesterMayNotApprove: ['*'] },
    });
    expect(
      policies.decide({ tool: 'pay', input: { amount: 1, payee: 'a' }, requester: ada, run }),
    ).toMatchObject({
      outcome: 'ask',
      ask: { requesterMayNotAnswer: true },
    });
  });

  it('escapes quotes, backslashes and control characters of a default answer', () => {
    const text = compileShortForm({
      deadline: {
        approve: { ms: 60_000, answer: { action: 'accept', content: 'say "ok"\\\n\u0007' } },
      },
    });
    expect(text).toContain('@default("accept:say \\"ok\\"\\\\\\u{a}\\u{7}")');
    const policies = loadPolicySet({
      tools: allTools,
      shortForm: {
        deadline: {
          approve: { ms: 60_000, answer: { action: 'accept', content: 'say "ok"\\\n\u0007' } },
        },
      },
    });
    const decision = policies.decide({
      tool: 'approve',
      input: { summary: 's' },
      requester: ada,
      run,
    });
    expect(decision).toMatchObject({
      ask: { deadline: { answer: { content: 'say "ok"\\\n\u0007' } } },
    });
  });

  it('refuses a value out of range, or a tool that is not defined', () => {
    const refused = (shortForm: ShortForm) => {
      try {
        loadPolicySet({ tools: allTools, shortForm });
      } catch (err) {
        if (PolicyError.is(err)) return err;
      }
      throw new Error('loaded');
    };
    const negative = refused({
      deadline: { approve: { ms: -300_000, answer: { action: 'decline', content: '' } } },
    });
    expect(negative.code).toBe('invalid_annotation');
    expect(negative.reason).toBe(
      'short-form:1: @deadline: "-300000ms": expected a positive duration like 30s, 15m, 1h, 2d',
    );
    const zero = refused({ quorum: { approve: { approvals: 0, declines: 1 } } });
    expect(zero.reason).toContain('@quorum: "0:1": expected M or M:D');
    const unknown = refused({ audience: { deploy: ['ops'] } });
    expect(unknown.code).toBe('invalid_policy');
    expect(unknown.reason).toMatch(/^short-form:\d+:\d+: .*Action::"deploy"/);
  });
});
