import type { AddressInfo } from 'node:net';
import type { NotificationRecord } from '@x/askuser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emailSender, NotifyError, readDecisionLink } from '../src/index.js';
import { questionCreated } from './support.js';

/** A real SMTP server on 127.0.0.1 that keeps each message it receives, raw. */
let smtp: SMTPServer;
let smtpUrl = '';
const messages: string[] = [];

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onData(stream, _session, callback) {
      let raw = '';
      stream.on('data', (chunk) => {
        raw += chunk;
      });
      stream.on('end', () => {
        messages.push(raw);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => smtp.close(() => resolve())));

/** A quoted-printable body as text: soft line breaks joined, =XX escapes decoded. */
const unquote = (text: string) =>
  text
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

function record(n: ReturnType<typeof questionCreated>): NotificationRecord {
  return {
    ...n,
    id: n.eventId,
    status: 'pending',
    attempts: 1,
    nextAt: new Date(),
    lastError: null,
    createdAt: new Date(),
    deliveredAt: null,
  };
}

const key = 'decision-key-of-the-test';

describe('emailSender, through a real SMTP server', () => {
  it('sends each recipient their own message, decision links only to those who may answer', async () => {
    messages.length = 0;
    const send = emailSender({
      url: smtpUrl,
      from: 'approvals@example.com',
      to: ['ana@example.com', 'bob@example.com'],
      publicUrl: 'https://approvals.example.com/',
      decisionKey: key,
      mayAnswer: async () => new Set(['ana@example.com']),
      answerCommands: (token) => [`answer ${token} --accept TEXT | --decline`],
      subjectPrefix: '[approvals]',
    });
    await send(record(questionCreated('m1', 'email', { options: ['blue', 'green'] })));
    expect(messages).toHaveLength(2);
    const [ana = '', bob = ''] = messages.map(unquote);
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
