import { questionEvent } from '@x/executive';
import { channelsFor, ruleMatches, webhookSignature } from '@x/notify';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  checkEnvironment,
  notifyRules,
  notifyRuleList as notifyRulesKind,
  setting,
  VARIABLES,
} from '../src/config/index.js';
import { deliveryFromEnv } from '../src/notify/deliver.js';

// Which events go where (RUNNER_NOTIFY), and the Standard Webhooks signature of a body.

const question = (tool: string, priority: number, roles: string[] = []) =>
  questionEvent('question.created', {
    token: 't',
    conversationId: 'c',
    kind: tool,
    question: 'Go?',
    options: null,
    priority,
    audience: { names: [], roles },
  });

describe('RUNNER_NOTIFY', () => {
  it('reads rules by kind, prefix, tool, priority and audience; refuses what it does not know', () => {
    expect(
      notifyRulesKind.parse('webhook=question.*?tool=approve&priority=5,webhook=run.failed', ''),
    ).toEqual([
      { channel: 'webhook', kind: 'question.*', tool: 'approve', priority: '5' },
      { channel: 'webhook', kind: 'run.failed' },
    ]);
    for (const bad of ['sms=*', 'webhook=question.lost', 'webhook=*?colour=red', 'webhook']) {
      expect(notifyRulesKind.parse(bad, ''), bad).toBeUndefined();
    }
    expect(() => setting(VARIABLES.RUNNER_NOTIFY, { RUNNER_NOTIFY: 'webhook=nope' })).toThrow(
      /RUNNER_NOTIFY must be CHANNEL=KIND/,
    );
  });

  it('a rule takes the events it names; a priority is a floor, an audience a role or a name', () => {
    const [rule] = notifyRulesKind.parse('webhook=question.*?tool=approve&priority=5', '') ?? [];
    if (!rule) throw new Error('no rule');
    expect(ruleMatches(rule, question('approve', 7))).toBe(true);
    expect(ruleMatches(rule, question('approve', 4))).toBe(false);
    expect(ruleMatches(rule, question('ask_user', 9))).toBe(false);
    expect(ruleMatches({ channel: 'webhook', kind: 'run.*' }, question('approve', 9))).toBe(false);
    const finance = { channel: 'webhook' as const, kind: '*', audience: 'finance' };
    expect(channelsFor([finance], question('approve', 0, ['finance']))).toEqual(['webhook']);
    expect(channelsFor([finance], question('approve', 0, ['ops']))).toEqual([]);
  });

  it("a question's end goes to Slack when its creation did, so that its message is updated", () => {
    const rules =
      notifyRulesKind.parse('slack=question.created?tool=approve,webhook=run.*', '') ?? [];
    const ended = (kind: 'question.answered' | 'question.expired', tool: string) => ({
      ...question(tool, 0),
      kind,
    });
    expect(channelsFor(rules, ended('question.answered', 'approve'))).toEqual(['slack']);
    expect(channelsFor(rules, ended('question.expired', 'approve'))).toEqual(['slack']);
    expect(channelsFor(rules, ended('question.answered', 'ask_user'))).toEqual([]);
    expect(channelsFor(rules, { ...question('approve', 0), kind: 'question.reminded' })).toEqual(
      [],
    );
  });

  it('defaults to every event to the webhook when RUNNER_WEBHOOK_URL is set; a webhook rule needs it', () => {
    expect(notifyRules({})).toEqual([]);
    expect(notifyRules({ RUNNER_WEBHOOK_URL: 'http://127.0.0.1:9/h' })).toEqual([
      { channel: 'webhook', kind: '*' },
    ]);
    expect(() => notifyRules({ RUNNER_NOTIFY: 'webhook=*' })).toThrow(/set RUNNER_WEBHOOK_URL/);
    // Refused before a command starts, not when an event would be written.
    expect(() => checkEnvironment({ RUNNER_NOTIFY: 'email=*' })).toThrow(
      'email notifications need RUNNER_SMTP_URL and RUNNER_EMAIL_TO',
    );
  });
});

describe('webhook signatures', () => {
  it("sign as the Standard Webhooks scheme's own example, and verify under either secret of a rotation", () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const [key] = setting(VARIABLES.RUNNER_WEBHOOK_SECRET, { RUNNER_WEBHOOK_SECRET: secret }) ?? [];
    if (!key) throw new Error('no key');
    expect(
      webhookSignature([key], 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    const old = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    const keys =
      setting(VARIABLES.RUNNER_WEBHOOK_SECRET, { RUNNER_WEBHOOK_SECRET: `${secret} ${old}` }) ?? [];
    const timestamp = Math.floor(Date.now() / 1000);
    const body = '{"type":"run.failed"}';
    const headers = {
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': webhookSignature(keys, 'evt_1', timestamp, body),
    };
    for (const s of [secret, old])
      expect(new Webhook(s).verify(body, headers)).toEqual({ type: 'run.failed' });
    for (const bad of ['whsec_short', 'nope', `${secret} ${old} ${old}`]) {
      expect(
        () => setting(VARIABLES.RUNNER_WEBHOOK_SECRET, { RUNNER_WEBHOOK_SECRET: bad }),
        bad,
      ).toThrow(
        'RUNNER_WEBHOOK_SECRET must be one or two whsec_BASE64 secrets separated by a space',
      );
    }
  });
});

describe('delivery settings', () => {
  it('the claim lease is RUNNER_NOTIFY_LEASE_MS, a minute by default; a bad value is refused', () => {
    expect(deliveryFromEnv({}).leaseMs).toBe(60_000);
    expect(deliveryFromEnv({ RUNNER_NOTIFY_LEASE_MS: '5000' })).toMatchObject({
      leaseMs: 5_000,
      maxAttempts: 8,
    });
    expect(() => deliveryFromEnv({ RUNNER_NOTIFY_LEASE_MS: 'soon' })).toThrow(
      /RUNNER_NOTIFY_LEASE_MS/,
    );
    expect(() => deliveryFromEnv({ RUNNER_NOTIFY_LEASE_MS: '0' })).toThrow(
      /RUNNER_NOTIFY_LEASE_MS/,
    );
  });
});
