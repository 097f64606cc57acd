import { describe, expect, it } from 'vitest';
import {
  decisionCsrf,
  memoryDecisionLinkLedger,
  NotifyError,
  readDecisionLink,
  shownDigest,
  signDecisionLink,
} from '../src/index.js';

const key = 'decision-key-of-the-test';
const fields = {
  token: 'q1',
  to: 'ana@example.com',
  answer: { action: 'accept' as const, content: 'blue' },
  shown: shownDigest({ question: 'Which colour?', options: ['blue', 'green'] }),
  expiresAt: Date.now() + 60_000,
};

const codeOf = (read: () => unknown) => {
  try {
    read();
  } catch (error) {
    return NotifyError.is(error) ? error.code : error;
  }
  return 'read';
};

describe('decision links', () => {
  it('read back what was signed: one answer to one question by one person, until a time', () => {
    const link = signDecisionLink(key, fields);
    expect(readDecisionLink(key, link)).toMatchObject({
      v: 1,
      token: 'q1',
      to: 'ana@example.com',
      answer: { action: 'accept', content: 'blue' },
      shown: fields.shown,
      exp: fields.expiresAt,
    });
    expect(signDecisionLink(key, fields)).not.toBe(link);
  });

  it('refuse a link signed with another key, tampered with, or malformed: invalid_link', () => {
    const link = signDecisionLink(key, fields);
    expect(codeOf(() => readDecisionLink('another-key', link))).toBe('invalid_link');
    const [body = '', mac = ''] = link.split('.');
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, to: 'eve@example.com' })).toString(
      'base64url',
    );
    expect(codeOf(() => readDecisionLink(key, `${forged}.${mac}`))).toBe('invalid_link');
    expect(codeOf(() => readDecisionLink(key, 'not-a-link'))).toBe('invalid_link');
  });

  it('refuse an expired link: expired_link', () => {
    const link = signDecisionLink(key, { ...fields, expiresAt: Date.now() - 1 });
    expect(codeOf(() => readDecisionLink(key, link))).toBe('expired_link');
    const later = signDecisionLink(key, fields);
    expect(codeOf(() => readDecisionLink(key, later, fields.expiresAt))).toBe('expired_link');
  });

  it('work once: a link used before is refused with used_link', async () => {
    const ledger = memoryDecisionLinkLedger();
    const claims = readDecisionLink(key, signDecisionLink(key, fields));
    await ledger.use(claims.id, claims.token);
    const again = await ledger.use(claims.id, claims.token).catch((e: unknown) => e);
    expect(NotifyError.hasCode(again, 'used_link')).toBe(true);
  });

  it('bind the confirmation page’s CSRF token to the link and the cookie’s nonce', () => {
    const link = signDecisionLink(key, fields);
    expect(decisionCsrf(key, link, 'n1')).toBe(decisionCsrf(key, link, 'n1'));
    expect(decisionCsrf(key, link, 'n2')).not.toBe(decisionCsrf(key, link, 'n1'));
  });

  it('refuse to sign a content over the limit: invalid_argument', () => {
    const long = { ...fields, answer: { action: 'accept' as const, content: 'x'.repeat(16_385) } };
    expect(codeOf(() => signDecisionLink(key, long))).toBe('invalid_argument');
  });
});
