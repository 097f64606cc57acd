import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_LINK_CONTENT_CHARS, slackSigned, slackUserEmail } from '@x/notify';
import { z } from 'zod';
import { ApprovalCenterError } from '../errors.js';
import { answerOf, type ErrorClassifier, sendJson } from '../http/send.js';
import { type ChannelAnswers, slackAnswerer } from './answers.js';

const MAX_BODY_BYTES = 64 * 1024;

/** Slack's interactivity endpoint: who may call it, and how its users are known. */
export interface SlackInteractionsOptions {
  /** The Slack app's signing secret: a request without its valid `v0` signature gets 401. */
  signingSecret: string;
  /** Slack user id -> the operator they answer as; a user not in it answers as the operator their Slack email names. */
  users?: Readonly<Record<string, string>> | undefined;
  /** The bot token that reads a user's email (`users:read.email`); none: only `users` map. */
  token?: string | undefined;
  /** Slack's Web API (default `https://slack.com/api/`). */
  apiUrl?: string | undefined;
  /** How refusals name the users map (the variable or option that sets it); default `the Slack users map`. */
  usersName?: string | undefined;
}

const buttonSchema = z.object({
  token: z.string().min(1).max(1000),
  action: z.enum(['accept', 'decline']),
  // A button carries what a decision link would: the same limit.
  content: z.string().max(MAX_LINK_CONTENT_CHARS),
});

const interactionSchema = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: z.string() }),
  actions: z.array(z.object({ value: z.string() })).min(1),
});

async function rawBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req as AsyncIterable<Buffer>) {
    text += chunk.toString('utf8');
    if (text.length > MAX_BODY_BYTES) {
      throw new ApprovalCenterError('forbidden', 'the request is too large');
    }
  }
  return text;
}

/** Who a Slack user answers as, asking Slack for their email only when `users` does not map them. */
async function answererOf(slack: SlackInteractionsOptions, answers: ChannelAnswers, user: string) {
  const mapped = slack.users?.[user];
  const email =
    mapped === undefined && slack.token
      ? (await slackUserEmail(slack.apiUrl, slack.token, user))?.toLowerCase()
      : undefined;
  const mapName = slack.usersName ?? 'the Slack users map';
  const as = slackAnswerer(
    await answers.operators(),
    user,
    { mapped, email, mapName },
    answers.refuse,
  );
  return { ...as, channel: 'slack', signedInWith: 'slack' };
}

/**
 * `POST /slack/interactions`, the Slack app's interactivity endpoint: a button of a question's
 * message answers it as the operator the Slack user is mapped to, through the channel `slack`,
 * the audience and the audit log applying as on the page. A request without Slack's valid
 * `v0` signature of the last five minutes gets 401 and changes nothing. False for another
 * path or method.
 */
export async function answerSlackRoute(
  slack: SlackInteractionsOptions,
  answers: ChannelAnswers,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  classifyError: ErrorClassifier | undefined,
): Promise<boolean> {
  if (url.pathname !== '/slack/interactions' || req.method !== 'POST') return false;
  const body = await rawBody(req);
  const timestamp = String(req.headers['x-slack-request-timestamp'] ?? '');
  const signature = String(req.headers['x-slack-signature'] ?? '');
  if (!slackSigned(slack.signingSecret, timestamp, signature, body)) {
    sendJson(res, 401, { error: { code: 'unauthorized', message: 'not signed by Slack' } });
    return true;
  }
  try {
    const payload = interactionSchema.parse(
      JSON.parse(new URLSearchParams(body).get('payload') ?? ''),
    );
    const button = buttonSchema.parse(JSON.parse(payload.actions[0]?.value ?? ''));
    const by = await answererOf(slack, answers, payload.user.id);
    const given = { action: button.action, content: button.content };
    await answers.answer(button.token, given, by);
    answers.answered?.();
    const who = by.answeredBy ?? by.identity?.name ?? '';
    const said = `${button.action}${button.content ? ` "${button.content}"` : ''} by ${who}`;
    sendJson(res, 200, { answered: button.token, text: said });
  } catch (caught) {
    if (caught instanceof SyntaxError || caught instanceof z.ZodError) {
      sendJson(res, 400, { response_type: 'ephemeral', text: 'not an interaction this app sent' });
      return true;
    }
    const { error, unexpected } = answerOf(caught, classifyError);
    if (unexpected) throw caught;
    sendJson(res, error.status, { response_type: 'ephemeral', text: error.reason });
  }
  return true;
}
