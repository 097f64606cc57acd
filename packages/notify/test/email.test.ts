import { type SmtpReceiver, startSmtpReceiver, unquote } from '@internal/pg-test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emailSender, NotifyError, readDecisionLink } from '../src/index.js';
import { questionCreated, record } from './support.js';

let smtp: SmtpReceiver;
beforeAll(async () => {
  smtp = await startSmtpReceiver();
});
afterAll(() => smtp.close());

const key = 'decision-key-of-the-test';

describe('emailSender, through a real SMTP server', () => {
  it('sends each recipient their own message, decision links only to those who may answer', async () => {
    const send = emailSender({
      url: smtp.url,
      from: 'approvals@example.com',
      to: ['ana@example.com', 'bob@example.com'],
      publicUrl: 'https://approvals.example.com/',
      decisionKey: key,
      mayAnswer: async () => new Set(['ana@example.com']),
      answerCommands: (token) => [`answer ${token} --accept TEXT | --decline`],
      subjectPrefix: '[approvals]',
    });
    await send(record(questionCreated('m1', 'email', { options: ['blue', 'green'] })));
    expect(smtp.messages).toHaveLength(2);
    const [ana = '', bob = ''] = smtp.messages.map(unquote);
    expect(ana).toContain('Message-ID: <evt_m1.0@notify>');
    expect(bob).toContain('Message-ID: <evt_m1.1@notify>');
    expect(ana).toContain('Subject: [approvals] question.created: Deploy m1?');
    expect(ana).toContain('answer m1 --accept TEXT | --decline');
    const links = [...ana.matchAll(/https:\/\/approvals\.example\.com\/decide\?link=([\w.-]+)/g)];
    const claims = [...new Set(links.map((m) => m[1] ?? ''))].map((l) => readDecisionLink(key, l));
    expect(claims.map((c) => [c.to, c.answer.action, c.answer.content])).toEqual([
      ['ana@example.com', 'accept', 'blue'],
      ['ana@example.com', 'accept', 'green'],
      ['ana@example.com', 'decline', ''],
    ]);
    expect(bob).not.toContain('decide?link=');
    expect(bob).toContain('the approval center: https://approvals.example.com/');
  });

  it('throws undelivered when the SMTP server cannot be reached', async () => {
    const send = emailSender({
      url: 'smtp://127.0.0.1:1',
      from: 'a@example.com',
      to: ['b@example.com'],
    });
    const error = await send(record(questionCreated('m2', 'email'))).catch((e: unknown) => e);
    expect(NotifyError.hasCode(error, 'undelivered')).toBe(true);
    expect((error as NotifyError).channel).toBe('email');
  });

  it('refuses a sender with neither url nor transport: invalid_argument', () => {
    const made = () => emailSender({ from: 'a@example.com', to: [] });
    expect(made).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});
