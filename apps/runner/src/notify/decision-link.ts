import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AnswerOptions, ResumeAnswer } from '@x/askuser';
import { z } from 'zod';
import { RunnerError } from '../errors.js';
import { MAX_ANSWER_CHARS } from '../executive/answer-limit.js';
import { refuseAnswerer } from '../executive/record-answer.js';
import { accessOf, type OperatorRecord } from '../storage/operators.js';

/** How long a decision link works at most (sooner when the question's deadline is). */
export const LINK_TTL_MS = 24 * 3600e3;

const claimsSchema = z
  .object({
    v: z.literal(1),
    /** The link's own id: consumed once, with the answer. */
    id: z.string().min(16).max(64),
    token: z.string().min(1).max(1000),
    /** The person the link was sent to: who answers with it. */
    to: z.string().min(1).max(320),
    answer: z.object({
      action: z.enum(['accept', 'decline']),
      content: z.string().max(MAX_ANSWER_CHARS),
    }),
    /** The digest of the question as it was shown ({@link shownDigest}). */
    shown: z.string().max(100),
    /** When it stops working, in ms since the epoch. */
    exp: z.number().int(),
  })
  .strict();

/** What a decision link says: one answer to one question, by one person, until a time. */
export type DecisionClaims = z.infer<typeof claimsSchema>;

/** `sha256:` and the hex digest of a question's words and options, as a link shows them. */
export function shownDigest(pause: { question: string; options: unknown }): string {
  const shown = JSON.stringify([pause.question, pause.options ?? null]);
  return `sha256:${createHash('sha256').update(shown).digest('hex')}`;
}

const mac = (key: string, text: string) =>
  createHmac('sha256', key).update(text).digest('base64url');

/** A signed link text (`claims.signature`, base64url) for `answer` to `token` by `to`. */
export function signDecision(
  key: string,
  fields: { token: string; to: string; answer: ResumeAnswer; shown: string; expiresAt: number },
): string {
  if (fields.answer.action === 'cancel') throw new Error('a decision link accepts or declines');
  const claims: DecisionClaims = {
    v: 1,
    id: randomBytes(16).toString('base64url'),
    token: fields.token,
    to: fields.to,
    answer: { action: fields.answer.action, content: fields.answer.content },
    shown: fields.shown,
    exp: fields.expiresAt,
  };
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${body}.${mac(key, body)}`;
}

/**
 * The claims of a decision link signed with `key`.
 * @throws `forbidden` for a link that is malformed or not signed with the key; `expired` for
 *   one past its time.
 */
export function readDecision(key: string, link: string, now = Date.now()): DecisionClaims {
  const [body = '', signature = ''] = link.split('.');
  const want = Buffer.from(mac(key, body));
  const given = Buffer.from(signature);
  if (!body || want.length !== given.length || !timingSafeEqual(want, given)) {
    throw new RunnerError('forbidden', 'this decision link is not valid');
  }
  const parsed = claimsSchema.safeParse(
    (() => {
      try {
        return JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        return undefined;
      }
    })(),
  );
  if (!parsed.success) throw new RunnerError('forbidden', 'this decision link is not valid');
  if (parsed.data.exp <= now) {
    throw new RunnerError('expired', 'this decision link has expired: answer on the page');
  }
  return parsed.data;
}

/** The CSRF token of a confirmation page: the link's HMAC with the cookie's nonce. */
export function decisionCsrf(key: string, link: string, nonce: string): string {
  return mac(key, `csrf.${nonce}.${link}`);
}

/**
 * Who the recipient of a decision link answers as, so the store checks the question's
 * audience when the answer is recorded, not only when the link was sent: the live operator
 * of that name (an admin answers anything, others as their identity), or, for an address
 * that names no operator, the address itself, which the audience must name or leave open.
 * @throws a forbidden error for a revoked operator or a viewer.
 */
export function linkAnswerer(
  operators: readonly OperatorRecord[],
  address: string,
): Pick<AnswerOptions, 'answeredBy' | 'identity'> {
  const operator = operators.find((o) => o.name === address);
  if (!operator) return { identity: { name: address } };
  if (operator.revokedAt) refuseAnswerer(`${address} is no longer an operator`);
  const access = accessOf(operator.roles);
  if (access === 'viewer') refuseAnswerer(`${address} is a viewer: viewers do not answer`);
  return access === 'admin'
    ? { answeredBy: operator.name }
    : { identity: { name: operator.name, roles: operator.roles } };
}
