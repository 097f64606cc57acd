import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { questionPolicyFromEnv } from '../src/config/executive-policy.js';
import { startRun } from '../src/executive/index.js';
import { modelFromId } from '../src/model/index.js';
import { Deliverer, deliveryFromEnv } from '../src/notify/deliver.js';
import { openStorage } from '../src/storage/index.js';
import { dataDirs } from './run-cli.js';
import { call, serve, until } from './serve-harness.js';

// Slack: a question is posted by the Web API with its buttons (a local server speaks Slack's
// Web API); serve's interactivity endpoint answers only under Slack's v0 signature of the
// last five minutes, as the operator the Slack user is mapped to, within the audience.

const dataDir = dataDirs();
const SECRET = 'the signing secret of the test app';
const posted: Array<{ auth: string; body: Record<string, unknown>; ts: string }> = [];
const updated: Array<Record<string, unknown>> = [];
const slack = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    const info = /^\/api\/users\.info\?user=(\w+)$/.exec(req.url ?? '');
    if (info) {
      // Slack's profile of a user; only UCAROL has an operator named by her email.
      const email = { UCAROL: 'Carol@Example.com', UDAN: 'dan@example.com' }[info[1] ?? ''];
      const user = { id: info[1], profile: email ? { email } : {} };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify(
            req.headers.authorization === 'Bearer xoxb-test'
              ? { ok: true, user }
              : { ok: false, error: 'invalid_auth' },
          ),
        );
    } else if (req.url === '/api/chat.postMessage') {
      // Slack answers with where the message is: its channel's id and its ts.
      const ts = `1700000000.00000${posted.length + 1}`;
      posted.push({ auth: String(req.headers.authorization), body: JSON.parse(body), ts });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: true, channel: 'C0APPROVALS', ts }));
    } else if (req.url === '/api/chat.update') {
      updated.push(JSON.parse(body));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    } else {
      res.writeHead(404).end();
    }
  });
});
let base = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => slack.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(slack.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => slack.close(() => resolve())));

/** A request to `/slack/interactions` as Slack signs it, at `at` seconds (default now). */
function interaction(user: string, value: string, at = Math.floor(Date.now() / 1000)) {
  const payload = { type: 'block_actions', user: { id: user }, actions: [{ value }] };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const signature = `v0=${createHmac('sha256', SECRET).update(`v0:${at}:${body}`).digest('hex')}`;
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(at),
      'x-slack-signature': signature,
    },
    body,
  };
}

describe('Slack (embedded default)', { timeout: 300_000 }, () => {
  it('posts Block Kit buttons; a signed click answers as the mapped operator, or the one named by the Slack email; a bad signature, a replay and a user outside the audience change nothing', async () => {
    const env = {
      RUNNER_SLACK_TOKEN: 'xoxb-test',
      RUNNER_SLACK_CHANNEL: 'C0APPROVALS',
      RUNNER_SLACK_API_URL: `${base}/api/`,
      RUNNER_SLACK_SIGNING_SECRET: SECRET,
      RUNNER_SLACK_USERS: 'UADA=ada,UBOB=bob',
      RUNNER_AUDIENCE: 'ask_user=finance',
    };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    const data = dataDir();
    const storage = await openStorage({ dataDir: data, command: 'test', log: () => {} });
    let token = '';
    let other = '';
    let third = '';
    let key = '';
    try {
      key = (await storage.operators().add('ada', ['operator', 'finance'])).key;
      await storage.operators().add('bob', ['operator']);
      await storage.operators().add('carol@example.com', ['operator', 'finance']);
      // The audience of the first question: RUNNER_AUDIENCE, as exec and serve read it.
      const questionPolicy = questionPolicyFromEnv();
      const run = await startRun(
        storage,
        modelFromId('scripted:trip'),
        'Plan',
        'slack',
        { event: () => {} },
        { questionPolicy },
      );
      if (run.status !== 'waiting') throw new Error(run.status);
      token = run.token;
      await new Deliverer(() => storage, deliveryFromEnv()).deliverDue();
      const second = await startRun(
        storage,
        modelFromId('scripted:trip'),
        'Plan',
        'slack-2',
        { event: () => {} },
        { questionPolicy },
      );
      if (second.status !== 'waiting') throw new Error(second.status);
      other = second.token;
      const answeredOnThePage = await startRun(
        storage,
        modelFromId('scripted:trip'),
        'Plan',
        'slack-3',
        { event: () => {} },
        { questionPolicy },
      );
      if (answeredOnThePage.status !== 'waiting') throw new Error(answeredOnThePage.status);
      third = answeredOnThePage.token;
      await new Deliverer(() => storage, deliveryFromEnv()).deliverDue();
    } finally {
      await storage.close();
      process.env = saved;
    }
    expect(posted).toHaveLength(3);
    const [message] = posted;
    expect(message?.auth).toBe('Bearer xoxb-test');
    expect(message?.body).toMatchObject({
      channel: 'C0APPROVALS',
      text: 'Where would you like to go?',
    });
    const blocks = (message?.body.blocks ?? []) as Array<{ type: string; elements?: unknown[] }>;
    const actions = blocks.find((b) => b.type === 'actions');
    const buttons = actions?.elements as Array<{ text: { text: string }; value: string }>;
    expect(buttons.map((b) => b.text.text)).toEqual(['Lisbon', 'Kyoto', 'Reykjavik', 'Decline']);
    const kyoto = buttons[1]?.value ?? '';

    const served = await serve(['--data', data], env);
    try {
      const at = new URL('/slack/interactions', served.url).href;
      const pending = async () =>
        (
          await call(new URL(`/api/pauses/${token}`, served.url).href, {
            headers: { authorization: `Bearer ${key}` },
          })
        ).status;
      const forged = interaction('UADA', kyoto);
      forged.headers['x-slack-signature'] = `v0=${'0'.repeat(64)}`;
      expect((await call(at, forged)).status, 'a bad signature').toBe(401);
      const replay = interaction('UADA', kyoto, Math.floor(Date.now() / 1000) - 301);
      expect((await call(at, replay)).status, 'a replay older than 5 minutes').toBe(401);
      const outside = await call(at, interaction('UBOB', kyoto));
      expect(outside.status, 'bob is not in the audience (finance)').toBe(403);
      expect((await call(at, interaction('UEVE', kyoto))).status, 'an unmapped user').toBe(403);
      expect(
        (await call(at, interaction('UDAN', kyoto))).status,
        'not mapped, and no operator is named by his Slack email',
      ).toBe(403);
      expect(await pending(), 'the refusals answered nothing').toBe(200);

      const clicked = await call(at, interaction('UADA', kyoto));
      expect(clicked.status).toBe(200);
      expect(clicked.body).toMatchObject({ answered: token, text: 'accept "Kyoto" by ada' });
      // Answered: its GET says so (409 already_answered).
      expect(await pending()).toBe(409);
      // The message now says who answered: updated where it was posted (chat.update).
      const ended = (of: string) => {
        const ts = posted.find((p) => JSON.stringify(p.body.blocks).includes(of))?.ts;
        return until(() => updated.find((u) => u.ts === ts), `the update of message ${ts}`);
      };
      expect(await ended(token)).toMatchObject({
        channel: 'C0APPROVALS',
        text: 'Answered: accept "Kyoto" by ada',
      });
      expect((await call(at, interaction('UADA', kyoto))).status, 'a second click').toBe(409);

      // Not in RUNNER_SLACK_USERS: Slack's users.info gives her email, which names an operator.
      const lisbon = JSON.stringify({ token: other, action: 'accept', content: 'Lisbon' });
      const byEmail = await call(at, interaction('UCAROL', lisbon));
      expect(byEmail.status).toBe(200);
      expect(byEmail.body).toMatchObject({ text: 'accept "Lisbon" by carol@example.com' });

      // Answered on the page, not in Slack: its message says so all the same.
      const onPage = await call(new URL(`/api/pauses/${third}/answer`, served.url).href, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ action: 'accept', content: 'Reykjavik' }),
      });
      expect(onPage.status).toBe(200);
      const update = await ended(third);
      expect(update).toMatchObject({
        channel: 'C0APPROVALS',
        text: 'Answered: accept "Reykjavik" by ada',
      });
      expect(JSON.stringify(update.blocks), 'its buttons are gone').not.toContain('actions');
      // The runs asked their next questions; no answer was posted as a message of its own.
      expect(posted.filter((p) => String(p.body.text).startsWith('Answered'))).toEqual([]);
    } finally {
      await served.stop();
    }
  });
});
