import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { NotifyError } from './errors.js';

/** How long a decision link works at most (sooner when the question's deadline is). */
export const LINK_TTL_MS = 24 * 3600e3;

/** The longest answer content a link carries, in characters: the runner's answer limit. */
export const MAX_LINK_CONTENT_CHARS = 16_384;

/** What a decision link says: one answer to one question, by one person, until a time. */
export interface DecisionClaims {
  v: 1;
  /** The link's own id: consumed once, with the answer. */
  id: string;
  /** The question's token. */
  token: string;
  /** The person the link was sent to: who answers with it. */
  to: string;
  answer: { action: 'accept' | 'decline'; content: string };
  /** The digest of the question as it was shown ({@link shownDigest}). */
  shown: string;
  /** When it stops working, in ms since the epoch. */
  exp: number;
}

const claimsSchema: z.ZodType<DecisionClaims> = z
  .object({
    v: z.literal(1),
    /** The link's own id: consumed once, with the answer. */
    id: z.string().min(16).max(64),
    token: z.string().min(1).max(1000),
    /** The person the link was sent to: who answers with it. */
    to: z.string().min(1).max(320),
    answer: z.object({
      action: z.enum(['accept', 'decline']),
      content: z.string().max(MAX_LINK_CONTENT_CHARS),
    }),
    /** The digest of the question as it was shown ({@link shownDigest}). */
    shown: z.string().max(100),
    /** When it stops working, in ms since the epoch. */
    exp: z.number().int(),
  })
  .strict();

/** What {@link signDecisionLink} signs. */
export interface DecisionLinkFields {
  /** The question's token. */
  token: string;
  /** The person the link is sent to. */
  to: string;
  /** The answer the link gives: accept (with content) or decline. */
  answer: { action: 'accept' | 'decline'; content: string };
  /** {@link shownDigest} of the question as the message shows it. */
  shown: string;
  /** When it stops working, in ms since the epoch. */
  expiresAt: number;
}

/** `sha256:` and the hex digest of a question's words and options, as a link shows them. */
export function shownDigest(pause: { question: string; options: unknown }): string {
  const shown = JSON.stringify([pause.question, pause.options ?? null]);
  return `sha256:${createHash('sha256').update(shown).digest('hex')}`;
}

const mac = (key: string, text: string) =>
  createHmac('sha256', key).update(text).digest('base64url');

/**
 * A signed link text (`claims.signature`, base64url) for one answer to one question by one
 * person, with an id of its own that {@link DecisionLinkLedger.use} consumes once.
 *
 * @example
 * const link = signDecisionLink(key, { token, to: 'ana@example.com', answer: { action: 'accept', content: '' }, shown: shownDigest(pause), expiresAt: Date.now() + LINK_TTL_MS });
 * const url = new URL(`decide?link=${link}`, publicUrl).href;
 */
export function signDecisionLink(key: string, fields: DecisionLinkFields): string {
  const claims: DecisionClaims = {
    v: 1,
    id: randomBytes(16).toString('base64url'),
    token: fields.token,
    to: fields.to,
    answer: { action: fields.answer.action, content: fields.answer.content },
    shown: fields.shown,
    exp: fields.expiresAt,
  };
  const parsed = claimsSchema.safeParse(claims);
  if (!parsed.success) {
    throw new NotifyError('invalid_argument', `a decision link cannot say this: ${parsed.error}`, {
      cause: parsed.error,
    });
  }
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${body}.${mac(key, body)}`;
}

function parseBody(body: string): unknown {
  try {
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The claims of a decision link signed with `key`. It does not consume the link: call
 * {@link DecisionLinkLedger.use} in the transaction that records its answer.
 * @throws {NotifyError} `invalid_link` for a link that is malformed or not signed with the
 *   key; `expired_link` for one past its time.
 */
export function readDecisionLink(key: string, link: string, now = Date.now()): DecisionClaims {
  const [body = '', signature = ''] = link.split('.');
  const want = Buffer.from(mac(key, body));
  const given = Buffer.from(signature);
  if (!body || want.length !== given.length || !timingSafeEqual(want, given)) {
    throw new NotifyError('invalid_link', 'this decision link is not valid');
  }
  const parsed = claimsSchema.safeParse(parseBody(body));
  if (!parsed.success) throw new NotifyError('invalid_link', 'this decision link is not valid');
  if (parsed.data.exp <= now) {
    throw new NotifyError('expired_link', 'this decision link has expired: answer on the page');
  }
  return parsed.data;
}

/** The CSRF token of a link's confirmation page: the link's HMAC with the page cookie's nonce. */
export function decisionCsrf(key: string, link: string, nonce: string): string {
  return mac(key, `csrf.${nonce}.${link}`);
}

/**
 * Where the used decision links are kept, so each answers once: the caller's (a table written
 * in the answer's transaction), or {@link memoryDecisionLinkLedger} for one process.
 */
export interface DecisionLinkLedger {
  /**
   * Consumes link `id` of question `token`.
   * @throws {NotifyError} `used_link` for a link used before.
   */
  use(id: string, token: string): Promise<void>;
}

/** A {@link DecisionLinkLedger} in this process's memory (lost on restart; for one process). */
export function memoryDecisionLinkLedger(): DecisionLinkLedger {
  const used = new Set<string>();
  return {
    async use(id) {
      if (used.has(id)) throw new NotifyError('used_link', 'this decision link was used already');
      used.add(id);
    },
  };
}
