import type { NotificationRecord } from '@x/askuser';
import { NotifyError } from './errors.js';
import { eventDataOf, optionLabels, QUESTION_ENDINGS } from './event-data.js';
import type { Sender } from './sender.js';

/** Where a question's Slack message was posted (`chat.postMessage`'s channel and ts). */
export interface SlackMessage {
  channel: string;
  ts: string;
}

/**
 * Where each question's Slack message is, kept by the caller (e.g. a table of its own), so
 * that the end of a question updates the message instead of posting another.
 */
export interface SlackMessageStore {
  /** Records where question `token`'s message is; the last post wins. */
  record(token: string, at: SlackMessage): Promise<void>;
  /** Where question `token`'s message is, or undefined when none was posted. */
  find(token: string): Promise<SlackMessage | undefined>;
}

/** The Slack app the questions are posted by. */
export interface SlackTarget {
  /** The Web API's base, ending in `/`; default `https://slack.com/api/`. */
  apiUrl?: string | undefined;
  /** The bot token (`xoxb-...`). */
  token: string;
  /** The channel each notification is posted to. */
  channel: string;
  /** Where the messages of questions are kept; without it, an ending is posted as a new message. */
  messages?: SlackMessageStore | undefined;
}

/** The Web API's base when none is given. */
export const SLACK_API_URL = 'https://slack.com/api/';

/** What a button's `value` says: which question, and the answer it gives. */
export interface SlackButton {
  token: string;
  action: 'accept' | 'decline';
  content: string;
}

/** The buttons of a new question: each option (or Approve), and Decline. */
function buttonsOf(token: string, options: unknown) {
  const labels = optionLabels(options);
  const buttons: Array<{ label: string; value: SlackButton; style?: string }> = [
    ...(labels.length ? labels : ['']).map((option) => ({
      label: option || 'Approve',
      value: { token, action: 'accept' as const, content: option },
      ...(option ? {} : { style: 'primary' }),
    })),
    { label: 'Decline', value: { token, action: 'decline', content: '' }, style: 'danger' },
  ];
  return {
    type: 'actions',
    elements: buttons.map((b, i) => ({
      type: 'button',
      action_id: `runner_answer_${i}`,
      text: { type: 'plain_text', text: b.label.slice(0, 75) },
      value: JSON.stringify(b.value),
      ...(b.style ? { style: b.style } : {}),
    })),
  };
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
  if (n.kind === 'question.created' && data.token) blocks.push(buttonsOf(data.token, data.options));
  return { text, blocks };
}

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
  let response: Response;
  try {
    response = await fetch(new URL(method, target.apiUrl ?? SLACK_API_URL), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${target.token}`,
        'content-type': 'application/json; charset=utf-8',
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new NotifyError('undelivered', (error as Error).message, {
      channel: 'slack',
      cause: error,
    });
  }
  const said = (await response.json().catch(() => ({}))) as {
    ok?: boolean;
    error?: string;
    channel?: unknown;
    ts?: unknown;
  };
  if (!response.ok || said.ok !== true) {
    throw new NotifyError(
      'undelivered',
      `Slack ${method}: ${response.status} ${said.error ?? ''}`.trim(),
      { channel: 'slack', status: response.status },
    );
  }
  return said;
}

/**
 * A sender that posts each notification to the channel by the Web API (`chat.postMessage`),
 * recording where a new question's message went; the end of a question that has a message
 * (answered anywhere, cancelled, expired) updates that message instead (`chat.update`).
 *
 * @example
 * const slack = slackSender({ token: 'xoxb-...', channel: 'C0123', messages: myMessageStore });
 */
export function slackSender(target: SlackTarget): Sender {
  return async (n) => {
    const { token } = eventDataOf(n.payload);
    const posted =
      token && QUESTION_ENDINGS.has(n.kind) ? await target.messages?.find(token) : undefined;
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
      await target.messages?.record(token, { channel, ts: said.ts });
    }
  };
}

/**
 * A Slack user's email address by the Web API (`users.info`; the app needs the
 * `users:read.email` scope); undefined when Slack gives none or cannot be reached.
 */
export async function slackUserEmail(
  apiUrl: string | undefined,
  token: string,
  user: string,
): Promise<string | undefined> {
  const url = new URL('users.info', apiUrl ?? SLACK_API_URL);
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
