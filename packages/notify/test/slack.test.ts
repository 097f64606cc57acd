import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  NotifyError,
  type SlackMessage,
  type SlackMessageStore,
  slackSender,
  slackSigned,
  slackUserEmail,
} from '../src/index.js';
import { questionCreated, type Receiver, record, startReceiver } from './support.js';

describe('slackSender, against a Web API on 127.0.0.1', () => {
  let slack: Receiver;
  let ok = true;
  beforeEach(async () => {
    ok = true;
    slack = await startReceiver((res, request) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (request.url === '/api/users.info?user=U1') {
        res.end(JSON.stringify({ ok: true, user: { profile: { email: 'ana@example.com' } } }));
        return;
      }
      res.end(
        JSON.stringify(
          ok ? { ok: true, channel: 'C1', ts: '17.01' } : { ok: false, error: 'channel_not_found' },
        ),
      );
    });
  });
  afterEach(() => slack.close());

  const memoryMessages = (): SlackMessageStore & { kept: Map<string, SlackMessage> } => {
    const kept = new Map<string, SlackMessage>();
    return {
      kept,
      record: async (token, at) => void kept.set(token, at),
      find: async (token) => kept.get(token),
    };
  };

  it('posts a new question with its buttons, then updates that message when it is answered', async () => {
    const messages = memoryMessages();
    const send = slackSender({
      apiUrl: `${slack.url}api/`,
      token: 'xoxb-1',
      channel: 'C1',
      messages,
    });
    const created = questionCreated('s1', 'slack', { options: ['blue', 'green'] });
    await send(record(created));
    expect(messages.kept.get('s1')).toEqual({ channel: 'C1', ts: '17.01' });
    await send(
      record(created, 'question.answered', {
        answer: { action: 'accept', content: 'blue' },
        answeredBy: 'ana',
      }),
    );
    expect(slack.requests.map((r) => [r.url, r.headers.authorization])).toEqual([
      ['/api/chat.postMessage', 'Bearer xoxb-1'],
      ['/api/chat.update', 'Bearer xoxb-1'],
    ]);
    const posted = JSON.parse(slack.requests[0]?.body ?? '{}');
    const buttons = posted.blocks[2].elements.map(
      (b: { text: { text: string }; value: string }) => [b.text.text, JSON.parse(b.value)],
    );
    expect(buttons).toEqual([
      ['blue', { token: 's1', action: 'accept', content: 'blue' }],
      ['green', { token: 's1', action: 'accept', content: 'green' }],
      ['Decline', { token: 's1', action: 'decline', content: '' }],
    ]);
    const updated = JSON.parse(slack.requests[1]?.body ?? '{}');
    expect(updated).toMatchObject({
      channel: 'C1',
      ts: '17.01',
      text: 'Answered: accept "blue" by ana',
    });
  });

  it('throws undelivered with Slack’s error when Slack says not ok', async () => {
    ok = false;
    const send = slackSender({ apiUrl: `${slack.url}api/`, token: 'xoxb-1', channel: 'C9' });
    const error = await send(record(questionCreated('s2', 'slack'))).catch((e: unknown) => e);
    expect(NotifyError.hasCode(error, 'undelivered')).toBe(true);
    expect((error as NotifyError).reason).toBe('Slack chat.postMessage: 200 channel_not_found');
  });

  it('finds a Slack user’s email address', async () => {
    expect(await slackUserEmail(`${slack.url}api/`, 'xoxb-1', 'U1')).toBe('ana@example.com');
  });
});

describe('slackSigned, the interactivity endpoint’s check', () => {
  const secret = 'signing-secret';
  const body = 'payload=%7B%7D';
  const now = Date.now();
  const at = String(Math.floor(now / 1000));
  const sign = (timestamp: string, text: string, key = secret) =>
    `v0=${createHmac('sha256', key).update(`v0:${timestamp}:${text}`).digest('hex')}`;

  it('takes a request Slack signed within five minutes', () => {
    expect(slackSigned(secret, at, sign(at, body), body, now)).toBe(true);
  });

  it('refuses a bad signature, another body, another secret, and an old or malformed timestamp', () => {
    expect(slackSigned(secret, at, 'v0=00', body, now)).toBe(false);
    expect(slackSigned(secret, at, sign(at, body), `${body}&x=1`, now)).toBe(false);
    expect(slackSigned(secret, at, sign(at, body, 'other'), body, now)).toBe(false);
    const old = String(Math.floor(now / 1000) - 301);
    expect(slackSigned(secret, old, sign(old, body), body, now)).toBe(false);
    expect(slackSigned(secret, 'soon', sign('soon', body), body, now)).toBe(false);
  });
});
