import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AskUserError, type Pending } from '@x/askuser';
import {
  type DecisionClaims,
  decisionCsrf,
  escapeHtml,
  readDecisionLink as readDecision,
  shownDigest,
  useDecisionLink,
} from '@x/notify';
import { setting, VARIABLES } from '../config/index.js';
import { RunnerError } from '../errors.js';
import { answer } from '../executive/index.js';
import { classifyFailure } from '../failure.js';
import { linkAnswerer } from '../notify/decision-link.js';
import type { Storage } from '../storage/index.js';
import type { ChannelRoute } from './http.js';

const COOKIE = 'runner_decide';
const MAX_FORM_BYTES = 64 * 1024;

function sendPage(
  res: ServerResponse,
  status: number,
  title: string,
  body: string,
  cookie?: string,
) {
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width"><meta name="robots" content="noindex"></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; form-action 'self'",
    ...(cookie ? { 'set-cookie': cookie } : {}),
  });
  res.end(page);
}

const answerText = ({ answer: a }: DecisionClaims) =>
  `${a.action}${a.content ? ` "${a.content}"` : ''}`;

/** The pending question a link answers, or why it no longer can (answered, changed). */
async function pendingFor(storage: Storage, claims: DecisionClaims): Promise<Pending> {
  const pause = await storage
    .pauses()
    .getByToken(claims.token)
    .catch((error: unknown) => {
      if (!AskUserError.hasCode(error, 'not_found')) throw error;
      throw new RunnerError('conflict', 'this question was answered already, or waits no more');
    });
  if (shownDigest(pause) !== claims.shown) {
    throw new RunnerError(
      'conflict',
      'this question changed since the link was sent: answer it on the page',
    );
  }
  return pause;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  let text = '';
  for await (const chunk of req as AsyncIterable<Buffer>) {
    text += chunk.toString('utf8');
    if (text.length > MAX_FORM_BYTES) throw new RunnerError('usage', 'the form is too large');
  }
  return new URLSearchParams(text);
}

function cookieOf(req: IncomingMessage): string {
  const pair = (req.headers.cookie ?? '').split(/;\s*/).find((c) => c.startsWith(`${COOKIE}=`));
  return pair?.slice(COOKIE.length + 1) ?? '';
}

/**
 * `/decide`, a decision link of an email: GET shows what the link would answer and a form
 * to confirm, and never answers (a mail scanner's prefetch changes nothing); POST from that
 * form (its CSRF token bound to the link and a cookie the GET set) records the answer, as
 * the person the link was sent to through the channel `email` (the question's audience
 * checked then, as for any answer), and consumes the link in the
 * same transaction, so it works once. A link for a question answered, expired or changed
 * says so. Returns false when decision links are not configured (RUNNER_DECISION_KEY).
 */
export const answerDecisionRoute: ChannelRoute = async (storage, answered, req, res, url) => {
  const key = setting(VARIABLES.RUNNER_DECISION_KEY);
  if (key === undefined || url.pathname !== '/decide') return false;
  try {
    if (req.method === 'GET') {
      const link = url.searchParams.get('link') ?? '';
      const claims = readDecision(key, link);
      const pause = await pendingFor(storage, claims);
      const nonce = randomBytes(16).toString('base64url');
      const csrf = decisionCsrf(key, link, nonce);
      sendPage(
        res,
        200,
        'Confirm your answer',
        `<p>${escapeHtml(pause.question)}</p><p>Answer as ${escapeHtml(claims.to)}: <strong>${escapeHtml(answerText(claims))}</strong></p>
<form method="post" action="/decide"><input type="hidden" name="link" value="${escapeHtml(link)}">
<input type="hidden" name="csrf" value="${csrf}"><button type="submit">Confirm: ${escapeHtml(answerText(claims))}</button></form>`,
        `${COOKIE}=${nonce}; Path=/decide; HttpOnly; SameSite=Strict; Max-Age=3600`,
      );
      return true;
    }
    if (req.method !== 'POST') throw new RunnerError('usage', 'open the link, then confirm');
    const form = await readForm(req);
    const link = form.get('link') ?? '';
    const want = Buffer.from(decisionCsrf(key, link, cookieOf(req)));
    const given = Buffer.from(form.get('csrf') ?? '');
    if (want.length !== given.length || !timingSafeEqual(want, given) || !cookieOf(req)) {
      throw new RunnerError('forbidden', 'confirm from the page the link opens (its form expired)');
    }
    const claims = readDecision(key, link);
    await pendingFor(storage, claims);
    await answer(
      storage,
      claims.token,
      claims.answer,
      {
        ...linkAnswerer(await storage.operators().list(), claims.to),
        channel: 'email',
        signedInWith: 'decision-link',
        shownDigest: claims.shown,
      },
      (tx) => useDecisionLink(tx, claims.id, claims.token),
    );
    answered();
    sendPage(
      res,
      200,
      'Answer recorded',
      `<p>${escapeHtml(answerText(claims))} by ${escapeHtml(claims.to)}.</p>`,
    );
  } catch (error) {
    const failure = classifyFailure(error);
    if (failure.internal) throw error;
    sendPage(
      res,
      failure.httpStatus,
      'This link cannot answer',
      `<p>${escapeHtml(failure.message)}</p>`,
    );
  }
  return true;
};
