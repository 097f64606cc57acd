import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  type NotificationRecord,
  recordSlackMessage,
  slackMessageOf,
} from '../storage/notifications.js';
import { eventDataOf } from './events.js';
import type { Sender } from './sender.js';

/** The Slack app the questions are posted by. */
export interface SlackTarget {
  /** The Web API's base (RUNNER_SLACK_API_URL), ending in `/`. */
  apiUrl: string;
  token: string;
  channel: string;
}

/** What a button's `value` says: which question, and the answer it gives. */
export interface SlackButton {
  token: string;
  action: 'accept' | 'decline';
  content: string;
}

/**
 * The Block Kit message of a notification: the question, its context and a button per
 * answer (each option, or Approve, and Decline) for a new question; one line for any other.
 */
export function slackMessage(n: NotificationRecord): { text: string; blocks: unknown[] } {
  const data = eventDataOf(n.payload);
  const text =
    data.question ?? `${n.kind}: run ${data.runId ?? ''}${data.error ? ` (${data.error})` : ''}`;
  const context = `${n.kind} · conversation ${data.conversationId ?? ''}${data.tool ? ` · ${data.tool}, priority ${data.priority ?? 0}` : ''}`;
  const blocks: unknown[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `*${text}*` } },
    { type: 'context', elements: [{ type: 'mrkdwn', text: context }] },
  ];
  if (n.kind === 'question.created' && data.token) {
    const options = Array.isArray(data.options) ? data.options.map(String) : [];
    const buttons: Array<{ label: string; value: SlackButton; style?: string }> = [
      ...(options.length ? options : ['']).map((option) => ({
        label: option || 'Approve',
        value: { token: data.token ?? '', action: 'accept' as const, content: option },
        ...(option ? {} : { style: 'primary' }),
      })),
      {
        label: 'Decline',
        value: { token: data.token, action: 'decline', content: '' },
        style: 'danger',
      },
    ];
    blocks.push({
      type: 'actions',
      elements: buttons.map((b, i) => ({
        type: 'button',
        action_id: `runner_answer_${i}`,
        text: { type: 'plain_text', text: b.label.slice(0, 75) },
        value: JSON.stringify(b.value),
        ...(b.style ? { style: b.style } : {}),
      })),
    });
  }
  return { text, blocks };
}

/** The events that end a question: its Slack message is updated to say so. */
export const QUESTION_ENDINGS: ReadonlySet<string> = new Set([
  'question.answered',
  'question.cancelled',
  'question.expired',
]);

/** What a question's message says once it ended: the question, and who answered it how. */
export function slackEnding(n: NotificationRecord): { text: string; blocks: unknown[] } {
  const data = eventDataOf(n.payload);
  const answer = data.answer
    ? `${data.answer.action}${data.answer.content ? ` "${data.answer.content}"` : ''}`
    : '';
  const text =
    n.kind === 'question.expired'
      ? `Expired: ${answer} applied at the deadline`
      : n.kind === 'question.cancelled'
        ? `Cancelled${data.answeredBy ? ` by ${data.answeredBy}` : ''}`
        : `Answered: ${answer} by ${data.answeredBy ?? 'someone'}`;
  return {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${data.question ?? ''}*` } },
      { type: 'context', elements: [{ type: 'mrkdwn', text }] },
    ],
  };
}

/** Calls Slack's Web API method `method` with `body`; throws unless Slack says ok. */
async function callSlack(
  target: SlackTarget,
  method: string,
  body: Record<string, unknown>,
): Promise<{ channel?: unknown; ts?: unknown }> {
  const response = await fetch(new URL(method, target.apiUrl), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${target.token}`,
      'content-type': 'application/json; charset=utf-8',
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const said = (await response.json().catch(() => ({}))) as {
    ok?: boolean;
    error?: string;
    channel?: unknown;
    ts?: unknown;
  };
  if (!response.ok || said.ok !== true) {
    throw new Error(`Slack ${method}: ${response.status} ${said.error ?? ''}`.trim());
  }
  return said;
}

/**
 * A sender that posts each notification to the channel by the Web API (`chat.postMessage`),
 * recording where a new question's message went; the end of a question that has a message
 * (answered anywhere, cancelled, expired) updates that message instead (`chat.update`).
 */
export function slackSender(target: SlackTarget): Sender {
  return async (n, storage) => {
    const { token } = eventDataOf(n.payload);
    const posted =
      token && QUESTION_ENDINGS.has(n.kind) ? await slackMessageOf(storage.db, token) : undefined;
    if (posted) {
      await callSlack(target, 'chat.update', { ...posted, ...slackEnding(n) });
      return;
    }
    const said = await callSlack(target, 'chat.postMessage', {
      channel: target.channel,
      ...slackMessage(n),
    });
    if (n.kind === 'question.created' && token && typeof said.ts === 'string') {
      const channel = typeof said.channel === 'string' ? said.channel : target.channel;
      await recordSlackMessage(storage.db, token, { channel, ts: said.ts });
    }
  };
}

/**
 * A Slack user's email address by the Web API (`users.info`; the app needs the
 * `users:read.email` scope); undefined when Slack gives none or cannot be reached.
 */
export async function slackUserEmail(
  apiUrl: string,
  token: string,
  user: string,
): Promise<string | undefined> {
  const url = new URL('users.info', apiUrl);
  url.searchParams.set('user', user);
  const body = (await fetch(url, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(10_000),
  })
    .then((response) => response.json())
    .catch(() => ({}))) as { ok?: boolean; user?: { profile?: { email?: unknown } } };
  const email = body.ok === true ? body.user?.profile?.email : undefined;
  return typeof email === 'string' && email !== '' ? email : undefined;
}

/** How long a signed Slack request stays valid: five minutes either way. */
export const SLACK_WINDOW_S = 300;

/**
 * Whether a request is Slack's: `v0=` and the hex HMAC-SHA256 of `v0:TIMESTAMP:BODY` under
 * the signing secret, with a timestamp within {@link SLACK_WINDOW_S} of now (no replay).
 */
export function slackSigned(
  secret: string,
  timestamp: string,
  signature: string,
  body: string,
  now = Date.now(),
): boolean {
  const at = Number(timestamp);
  if (!Number.isInteger(at) || Math.abs(now / 1000 - at) > SLACK_WINDOW_S) return false;
  const want = Buffer.from(
    `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`,
  );
  const given = Buffer.from(signature);
  return want.length === given.length && timingSafeEqual(want, given);
}
