import type { IncomingMessage } from 'node:http';
import { accessOf } from '@x/approval-center';
import { sendJson } from '@x/approval-center/http';
import type { AnswerOptions } from '@x/askuser';
import { slackSigned, slackUserEmail } from '@x/notify';
import { z } from 'zod';
import { setting, VARIABLES } from '../config/index.js';
import { forbiddenError } from '../errors.js';
import { MAX_ANSWER_CHARS } from '../executive/answer-limit.js';
import { answer, refuseAnswerer } from '../executive/index.js';
import { classifyFailure } from '../failure.js';
import type { Storage } from '../storage/index.js';
import type { ChannelRoute } from './http.js';

const MAX_BODY_BYTES = 64 * 1024;

const buttonSchema = z.object({
  token: z.string().min(1).max(1000),
  action: z.enum(['accept', 'decline']),
  content: z.string().max(MAX_ANSWER_CHARS),
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
    if (text.length > MAX_BODY_BYTES) throw forbiddenError('the request is too large');
  }
  return text;
}

/** A Slack user's email, asked of Slack's Web API; undefined without a bot token. */
async function emailOf(slackUser: string): Promise<string | undefined> {
  const token = setting(VARIABLES.RUNNER_SLACK_TOKEN);
  return token && slackUserEmail(setting(VARIABLES.RUNNER_SLACK_API_URL), token, slackUser);
}

/**
 * Who a Slack user answers as: the live operator RUNNER_SLACK_USERS maps them to, else (not
 * mapped) the one named by the user's Slack email, letter case aside.
 */
async function answererOf(storage: Storage, slackUser: string): Promise<AnswerOptions> {
  const mapped = setting(VARIABLES.RUNNER_SLACK_USERS)?.[slackUser];
  const email = mapped === undefined ? (await emailOf(slackUser))?.toLowerCase() : undefined;
  const operators = await storage.operators().list();
  const operator =
    mapped !== undefined
      ? operators.find((o) => o.name === mapped)
      : email && operators.find((o) => o.name.toLowerCase() === email);
  if (!operator || operator.revokedAt) {
    refuseAnswerer(
      `Slack user ${slackUser} answers as no live operator (RUNNER_SLACK_USERS, or an operator named by their Slack email)`,
    );
  }
  const access = accessOf(operator.roles);
  if (access === 'viewer') {
    refuseAnswerer(`${operator.name} is a viewer: viewers do not answer`);
  }
  const how = { channel: 'slack', signedInWith: 'slack' };
  // An admin answers any question; anyone else only what the question's audience admits.
  return access === 'admin'
    ? { ...how, answeredBy: operator.name }
    : { ...how, identity: { name: operator.name, roles: operator.roles } };
}

/**
 * `POST /slack/interactions`, the Slack app's interactivity endpoint: a button of a question's
 * message answers it as the operator the Slack user is mapped to, through the channel `slack`,
 * the audience and the audit log applying as on the page; its `question.answered` then
 * updates the message to say who answered (`chat.update`, as an answer anywhere does). A request without Slack's valid `v0` signature of the
 * last five minutes gets 401 and changes nothing. Returns false when no signing secret is
 * set (RUNNER_SLACK_SIGNING_SECRET) or for another path.
 */
export const answerSlackRoute: ChannelRoute = async (storage, answered, req, res, url) => {
  const secret = setting(VARIABLES.RUNNER_SLACK_SIGNING_SECRET);
  if (secret === undefined || url.pathname !== '/slack/interactions' || req.method !== 'POST') {
    return false;
  }
  const body = await rawBody(req);
  const timestamp = String(req.headers['x-slack-request-timestamp'] ?? '');
  const signature = String(req.headers['x-slack-signature'] ?? '');
  if (!slackSigned(secret, timestamp, signature, body)) {
    sendJson(res, 401, { error: { code: 'unauthorized', message: 'not signed by Slack' } });
    return true;
  }
  try {
    const payload = interactionSchema.parse(
      JSON.parse(new URLSearchParams(body).get('payload') ?? ''),
    );
    const button = buttonSchema.parse(JSON.parse(payload.actions[0]?.value ?? ''));
    const by = await answererOf(storage, payload.user.id);
    const given = { action: button.action, content: button.content };
    await answer(storage, button.token, given, by);
    answered();
    const who = by.answeredBy ?? by.identity?.name ?? '';
    const said = `${button.action}${button.content ? ` "${button.content}"` : ''} by ${who}`;
    sendJson(res, 200, { answered: button.token, text: said });
  } catch (error) {
    const failure = classifyFailure(error);
    if (failure.internal && !(error instanceof SyntaxError || error instanceof z.ZodError)) {
      throw error;
    }
    const status = failure.internal ? 400 : failure.httpStatus;
    const message = failure.internal ? 'not an interaction this app sent' : failure.message;
    sendJson(res, status, { response_type: 'ephemeral', text: message });
  }
  return true;
};
