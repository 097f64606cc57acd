import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AskUserError, type Pending } from '@x/askuser';
import { withoutOrigin } from '@x/executive';
import {
  type DecisionClaims,
  decisionCsrf,
  escapeHtml,
  NotifyError,
  readDecisionLink,
  shownDigest,
  useDecisionLink,
} from '@x/notify';
import { ApprovalCenterError } from '../errors.js';
import { answerOf, type ErrorClassifier } from '../http/send.js';
import { type ChannelAnswers, linkAnswerer } from './answers.js';

const COOKIE = 'approval_center_decide';
const MAX_FORM_BYTES = 64 * 1024;

/** What a request of the route needs beyond the options. */
interface ChannelRequest {
  mountPath: string;
  classifyError: ErrorClassifier | undefined;
}

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
async function pendingFor(answers: ChannelAnswers, claims: DecisionClaims): Promise<Pending> {
  const pause = await answers.pending(claims.token).catch((error: unknown) => {
    if (!AskUserError.hasCode(error, 'not_found')) throw error;
    throw new ApprovalCenterError(
      'conflict',
      'this question was answered already, or waits no more',
    );
  });
  if (shownDigest(pause) !== claims.shown) {
    throw new ApprovalCenterError(
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
    if (text.length > MAX_FORM_BYTES) {
      throw new ApprovalCenterError('invalid_request', 'the form is too large');
    }
  }
  return new URLSearchParams(text);
}

function cookieOf(req: IncomingMessage): string {
  const pair = (req.headers.cookie ?? '').split(/;\s*/).find((c) => c.startsWith(`${COOKIE}=`));
  return pair?.slice(COOKIE.length + 1) ?? '';
}

/** A decision link's refusal as the center's error: forged or altered, expired, used. */
function linkRefusal(error: unknown): unknown {
  if (!NotifyError.is(error)) return error;
  const code = (
    { invalid_link: 'forbidden', expired_link: 'expired', used_link: 'conflict' } as const
  )[error.code as string];
  if (code === undefined) return error;
  return new ApprovalCenterError(code, withoutOrigin(error.message), { cause: error });
}

/**
 * `/decide`, a decision link of an email: GET shows what the link would answer and a form
 * to confirm, and never answers (a mail scanner's prefetch changes nothing); POST from that
 * form (its CSRF token bound to the link and a cookie the GET set) records the answer, as
 * the person the link was sent to through the channel `email` (the question's audience
 * checked then, as for any answer), and consumes the link in the same transaction, so it
 * works once. A link for a question answered, expired or changed says so. False for
 * another path.
 */
export async function answerDecisionRoute(
  key: string,
  answers: ChannelAnswers,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  request: ChannelRequest,
): Promise<boolean> {
  if (url.pathname !== '/decide') return false;
  const { mountPath } = request;
  try {
    if (req.method === 'GET') {
      const link = url.searchParams.get('link') ?? '';
      const claims = readDecisionLink(key, link);
      const pause = await pendingFor(answers, claims);
      const nonce = randomBytes(16).toString('base64url');
      const csrf = decisionCsrf(key, link, nonce);
      sendPage(
        res,
        200,
        'Confirm your answer',
        `<p>${escapeHtml(pause.question)}</p><p>Answer as ${escapeHtml(claims.to)}: <strong>${escapeHtml(answerText(claims))}</strong></p>
<form method="post" action="${mountPath}/decide"><input type="hidden" name="link" value="${escapeHtml(link)}">
<input type="hidden" name="csrf" value="${csrf}"><button type="submit">Confirm: ${escapeHtml(answerText(claims))}</button></form>`,
        `${COOKIE}=${nonce}; Path=${mountPath}/decide; HttpOnly; SameSite=Strict; Max-Age=3600`,
      );
      return true;
    }
    if (req.method !== 'POST') {
      throw new ApprovalCenterError('invalid_request', 'open the link, then confirm');
    }
    const form = await readForm(req);
    const link = form.get('link') ?? '';
    const want = Buffer.from(decisionCsrf(key, link, cookieOf(req)));
    const given = Buffer.from(form.get('csrf') ?? '');
    if (want.length !== given.length || !timingSafeEqual(want, given) || !cookieOf(req)) {
      throw new ApprovalCenterError(
        'forbidden',
        'confirm from the page the link opens (its form expired)',
      );
    }
    const claims = readDecisionLink(key, link);
    await pendingFor(answers, claims);
    const recipient = linkAnswerer(await answers.operators(), claims.to, answers.refuse);
    await answers.answer(
      claims.token,
      claims.answer,
      { ...recipient, channel: 'email', signedInWith: 'decision-link', shownDigest: claims.shown },
      (tx) => useDecisionLink(tx, claims.id, claims.token),
    );
    answers.answered?.();
    sendPage(
      res,
      200,
      'Answer recorded',
      `<p>${escapeHtml(answerText(claims))} by ${escapeHtml(claims.to)}.</p>`,
    );
  } catch (caught) {
    const { error, unexpected } = answerOf(linkRefusal(caught), request.classifyError);
    if (unexpected) throw caught;
    sendPage(
      res,
      error.status,
      'This link cannot answer',
      `<p>${escapeHtml(withoutOrigin(error.reason))}</p>`,
    );
  }
  return true;
}
