import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leasePolicyFromEnv, questionPolicyFromEnv } from '../src/config/executive-policy.js';
import { startRun, wake, watching } from '../src/executive/index.js';
import { modelFromId } from '../src/model/index.js';
import { Deliverer, deliveryFromEnv } from '../src/notify/deliver.js';
import { RunnerMetrics } from '../src/serve/metrics.js';
import { openStorage } from '../src/storage/index.js';
import { outboxFlow } from './notifications-flow.js';
import { parsePrometheus, sampleValue } from './prometheus.js';
import { dataDirs, runCli, runInProcess } from './run-cli.js';
import { call, json, serve, until } from './serve-harness.js';
import { type SmtpReceiver, startSmtpReceiver, unquote } from './smtp-receiver.js';
import { newSecret, startReceiver, type WebhookReceiver } from './webhook-receiver.js';

// The notification outbox on the embedded default: written in the event's transaction,
// delivered at least once with Standard Webhooks signatures, the dead letter after the
// attempts; `runner notifications list | retry` and `wake --once` deliver it again.

const dataDir = dataDirs();

/** Email notifications of new questions through `smtp` to `to`, with decision links. */
const emailSettings = (smtp: SmtpReceiver, to: string) => ({
  RUNNER_SMTP_URL: smtp.url,
  RUNNER_EMAIL_TO: to,
  RUNNER_PUBLIC_URL: 'https://approvals.example.com/',
  RUNNER_NOTIFY: 'email=question.created',
  RUNNER_DECISION_KEY: 'a decision key of the test, 32 b',
});
const secrets = { current: newSecret(), old: newSecret() };
let receiver: WebhookReceiver;
let env: Record<string, string>;

beforeAll(async () => {
  receiver = await startReceiver();
  env = {
    RUNNER_WEBHOOK_URL: receiver.url,
    RUNNER_WEBHOOK_SECRET: `${secrets.current} ${secrets.old}`,
  };
  Object.assign(process.env, env);
});
afterAll(() => receiver?.close());

describe('notifications (embedded default)', { timeout: 300_000 }, () => {
  it('outbox in the transaction, retries then the dead letter; list, retry and wake --once deliver it again', async () => {
    const data = dataDir();
    const storage = await openStorage({ dataDir: data, command: 'test', log: () => {} });
    const failedId = await outboxFlow(storage, receiver, secrets).finally(() => storage.close());

    const listed = await runInProcess(
      ['notifications', 'list', '--status', 'failed', '--data', data, '--json'],
      { env },
    );
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.events).toEqual([
      expect.objectContaining({
        type: 'notification',
        id: failedId,
        kind: 'question.answered',
        status: 'failed',
        attempts: 3,
        lastError: expect.stringContaining('answered 503'),
      }),
    ]);
    const unknown = await runInProcess(['notifications', 'retry', 'no-such-id', '--data', data], {
      env,
    });
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain('no notification has the id no-such-id');

    const retried = await runInProcess(['notifications', 'retry', failedId, '--data', data], {
      env,
    });
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain(`${failedId} (question.answered → webhook) is due again`);
    receiver.answer = () => 204;
    const woke = await runInProcess(['wake', '--once', '--data', data, '--json'], { env });
    expect(woke.code, woke.stderr).toBe(0);
    // The answered run resumed and asked its next question: that one goes out too.
    // Sent side by side: in either order.
    const sent = woke.events.filter((e) => e.type.startsWith('notification-'));
    expect(sent).toHaveLength(2);
    expect(sent).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'notification-delivered', id: failedId, attempt: 1 }),
        expect.objectContaining({ type: 'notification-delivered', kind: 'question.created' }),
      ]),
    );
    expect(receiver.received.map((r) => r.status)).toEqual([204, 204]);
    const bodies = receiver.received.map((r) => JSON.parse(r.body));
    const next = bodies.find((b) => b.type === 'question.created');

    // As the real binary: the other commands run in the tests' process.
    const all = await runCli(['notifications', 'list', '--data', data], { env });
    expect(all.stdout).toMatch(/question\.answered → webhook {2}delivered \S+Z/);
    expect(all.stdout).toMatch(/question\.created → webhook {2}delivered \S+Z/);

    // serve: an admin reads the outbox; its hosted wake delivers the answer given through it.
    const token = next.data.token as string;
    receiver.received.length = 0;
    const served = await serve(['--data', data], env);
    try {
      const api = new URL('/api/', served.url).href;
      const listedApi = await call(`${api}notifications?status=delivered`);
      expect(listedApi.status).toBe(200);
      // Both questions of conversation saved and its answer, and the stopped one's two.
      expect(listedApi.body.notifications).toHaveLength(5);
      expect((await call(`${api}notifications?status=lost`)).status).toBe(400);
      // Page by page: each gives the `before` of the next, the last gives none.
      const pages: string[][] = [];
      for (let before = ''; ; ) {
        const page = await call(
          `${api}notifications?status=delivered&limit=2${before && `&before=${before}`}`,
        );
        expect(page.status).toBe(200);
        pages.push(page.body.notifications.map((n: { id: string }) => n.id));
        if (page.body.next === null) break;
        before = page.body.next;
      }
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      expect(pages.flat()).toEqual(listedApi.body.notifications.map((n: { id: string }) => n.id));
      expect((await call(`${api}notifications?before=`)).status).toBe(400);
      const [one] = listedApi.body.notifications;
      const retried = await call(`${api}notifications/${one.id}/retry`, json({}));
      expect(retried.body.notification).toMatchObject({
        id: one.id,
        status: 'pending',
        attempts: 0,
      });
      expect((await call(`${api}notifications/${one.id}/retry`, json({}))).status).toBe(409);
      expect((await call(`${api}notifications/nope/retry`, json({}))).status).toBe(404);
      // The CLI's list and retry go through the serve that holds the folder, as the others do.
      const listedCli = await runInProcess(['notifications', 'list', '--data', data, '--json'], {
        env,
      });
      expect(listedCli.code, listedCli.stderr).toBe(0);
      expect(listedCli.stderr).toContain(`"type":"via-serve","pid":${served.child.pid}`);
      // serve's deliverer may have sent the retried one again meanwhile.
      expect(['pending', 'delivered']).toContain(
        listedCli.events.find((n) => n.id === one.id)?.status,
      );
      const retriedCli = await runInProcess(['notifications', 'retry', 'nope', '--data', data], {
        env,
      });
      expect(retriedCli.code).toBe(3);
      expect(retriedCli.stderr).toContain(`via serve (pid ${served.child.pid})`);
      expect(retriedCli.stderr).toContain('no notification has the id nope');
      const answered = await call(
        `${api}pauses/${token}/answer`,
        json({ action: 'accept', content: 'Kyoto' }),
      );
      expect(answered.status).toBe(200);
      const delivered = await until(
        () =>
          receiver.received.find(
            (r) =>
              JSON.parse(r.body).type === 'question.answered' &&
              JSON.parse(r.body).data.token === token,
          ),
        'the answer to be delivered by serve',
      );
      expect(JSON.parse(delivered.body)).toMatchObject({
        type: 'question.answered',
        data: { token, answer: { action: 'accept', content: 'Kyoto' }, channel: 'api' },
      });
    } finally {
      await served.stop();
    }
  });

  it('a run that fails for good sends run.failed, written with the failure', async () => {
    const data = dataDir();
    const notify = { ...env, RUNNER_NOTIFY: 'webhook=run.failed' };
    const exec = await runInProcess(
      ['exec', 'Plan', '--conversation', 'f', '--data', data, '--json'],
      {
        env: notify,
      },
    );
    const waiting = exec.events.at(-1) as unknown as { runId: string; token: string };
    await runInProcess(['answer', waiting.token, '--option', '1', '--data', data], { env: notify });
    receiver.received.length = 0;
    receiver.answer = () => 204;
    const failed = await runCli(['wake', '--once', '--data', data, '--json'], {
      env: { ...notify, RUNNER_SCRIPTED_FAIL: '1', RUNNER_MAX_ATTEMPTS: '1' },
    });
    expect(failed.events).toContainEqual(
      expect.objectContaining({ type: 'run-failed', runId: waiting.runId }),
    );
    const sent = receiver.received.map((r) => JSON.parse(r.body));
    expect(sent).toEqual([
      expect.objectContaining({
        type: 'run.failed',
        data: expect.objectContaining({
          runId: waiting.runId,
          conversationId: 'f',
          error: '[scripted] 503 simulated outage (RUNNER_SCRIPTED_FAIL)',
        }),
      }),
    ]);
  });

  it("decision links go only to recipients in the question's audience; the others get the notice alone", async () => {
    const smtp = await startSmtpReceiver();
    const saved = { ...process.env };
    Object.assign(process.env, {
      ...emailSettings(smtp, 'ada@example.com,bob@example.com,root@example.com,carol@example.com'),
      RUNNER_AUDIENCE: 'ask_user=finance',
    });
    const data = dataDir();
    const storage = await openStorage({ dataDir: data, command: 'test', log: () => {} });
    const linkOf = (address: string) => {
      const found = unquote(smtp.messages.find((m) => m.includes(`To: ${address}`)) ?? '');
      return /\/decide\?link=([\w.-]+)/.exec(found)?.[1] ?? '';
    };
    try {
      await storage.operators().add('ada@example.com', ['operator', 'finance']);
      await storage.operators().add('bob@example.com', ['operator']);
      await storage.operators().add('root@example.com', ['admin']);
      const run = await startRun(
        storage,
        modelFromId('scripted:trip'),
        'Plan',
        'mail-aud',
        { event: () => {} },
        { questionPolicy: questionPolicyFromEnv() },
      );
      if (run.status !== 'waiting') throw new Error(run.status);
      await new Deliverer(() => storage, deliveryFromEnv()).deliverDue();
      const to = (address: string) => {
        const found = smtp.messages.filter((m) => m.includes(`To: ${address}`));
        expect(found, address).toHaveLength(1);
        // The text part's links (the HTML part has the same ones, as buttons).
        const [text = ''] = unquote(found[0] ?? '').split('Content-Type: text/html');
        expect(text, address).toContain('Question: Where would you like to go?');
        return (text.match(/\/decide\?link=/g) ?? []).length;
      };
      expect(to('ada@example.com'), 'in the audience (finance)').toBe(4);
      expect(to('root@example.com'), 'an admin answers any question').toBe(4);
      expect(to('bob@example.com'), 'an operator outside the audience').toBe(0);
      expect(to('carol@example.com'), 'no operator').toBe(0);
      // The audience is checked again when a link answers: ada's link outlives her access.
      await storage.operators().revoke('ada@example.com');
    } finally {
      await storage.close();
      await smtp.close();
    }
    const served = await serve(['--data', data], { ...process.env });
    process.env = saved;
    try {
      const base = served.url.replace(/\/$/, '');
      const confirm = async (link: string) => {
        const shown = await fetch(`${base}/decide?link=${link}`);
        const csrf = /name="csrf" value="([^"]+)"/.exec(await shown.text())?.[1] ?? '';
        const cookie = shown.headers.get('set-cookie')?.split(';')[0] ?? '';
        return fetch(`${base}/decide`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
          body: new URLSearchParams({ link, csrf }).toString(),
        });
      };
      const refused = await confirm(linkOf('ada@example.com'));
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('ada@example.com is no longer an operator');
      // Had the refusal answered anything, this would be 409.
      const confirmed = await confirm(linkOf('root@example.com'));
      expect(confirmed.status).toBe(200);
      expect(await confirmed.text()).toContain('by root@example.com');
    } finally {
      await served.stop();
    }
  });

  it('email over SMTP with decision links: a real SMTP server receives them; a prefetch answers nothing, the confirmed POST answers once', async () => {
    const links: string[] = [];
    const smtp = await startSmtpReceiver();
    const { messages } = smtp;
    const saved = { ...process.env };
    Object.assign(process.env, emailSettings(smtp, 'ops@example.com,ada@example.com'));
    const data = dataDir();
    const storage = await openStorage({ dataDir: data, command: 'test', log: () => {} });
    let token = '';
    try {
      const run = await startRun(storage, modelFromId('scripted:trip'), 'Plan', 'mail', {
        event: () => {},
      });
      if (run.status !== 'waiting') throw new Error(run.status);
      token = run.token;
      const [queued] = await storage.notifications().list();
      expect(queued).toMatchObject({ channel: 'email', kind: 'question.created' });
      await new Deliverer(() => storage, deliveryFromEnv()).deliverDue();
      expect(await storage.notifications().list()).toEqual([
        expect.objectContaining({ status: 'delivered', attempts: 1 }),
      ]);
      // Decision links name their recipient: one message each.
      expect(messages).toHaveLength(2);
      // Quoted-printable: soft line breaks and =XX escapes.
      const message = unquote(messages.find((m) => /^To: ada@example\.com/m.test(m)) ?? '');
      expect(message).toContain(`Message-ID: <${queued?.eventId}.1@runner>`);
      expect(message).toContain('Subject: [runner] question.created: Where would you like to go?');
      expect(message).toContain('Conversation: mail');
      expect(message).toContain('the approval center: https://approvals.example.com/');
      expect(message).toContain(`runner answer ${run.token} --accept TEXT | --decline`);
      // The text part's links (the HTML part has the same ones, as buttons).
      const [text = ''] = message.split('Content-Type: text/html');
      links.push(...(text.match(/https:\/\/approvals\.example\.com\/decide\?link=[\w.-]+/g) ?? []));
    } finally {
      await storage.close();
      await smtp.close();
    }
    // Lisbon, Kyoto and Reykjavik, and decline; a proxy would put serve at the public address.
    expect(links).toHaveLength(4);
    const served = await serve(['--data', data], { ...process.env });
    process.env = saved;
    try {
      const at = (link: string) =>
        new URL(new URL(link).pathname + new URL(link).search, served.url).href;
      const first = at(links[0] ?? '');
      const prefetch = await fetch(first);
      expect(prefetch.status).toBe(200);
      const page = await prefetch.text();
      expect(page).toContain('Confirm your answer');
      const api = new URL('/api/', served.url).href;
      expect((await call(`${api}pauses/${token}`)).status, 'a GET answers nothing').toBe(200);

      const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
      const link = new URL(first).searchParams.get('link') ?? '';
      const form = (fields: Record<string, string>, cookie?: string): RequestInit => ({
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(cookie ? { cookie } : {}),
        },
        body: new URLSearchParams(fields).toString(),
      });
      const cookie = prefetch.headers.get('set-cookie')?.split(';')[0] ?? '';
      expect(
        (await fetch(`${served.url.replace(/\/$/, '')}/decide`, form({ link, csrf }))).status,
        'no cookie',
      ).toBe(403);
      const tampered = `${link.slice(0, -2)}${link.endsWith('AA') ? 'BB' : 'AA'}`;
      expect((await fetch(at(`https://x/decide?link=${tampered}`))).status).toBe(403);
      expect((await call(`${api}pauses/${token}`)).status, 'refusals answer nothing').toBe(200);

      const confirmed = await fetch(
        `${served.url.replace(/\/$/, '')}/decide`,
        form({ link, csrf }, cookie),
      );
      expect(confirmed.status).toBe(200);
      expect(await confirmed.text()).toContain('by ada@example.com');
      expect((await call(`${api}pauses/${token}`)).status).toBe(409);
      const again = await fetch(
        `${served.url.replace(/\/$/, '')}/decide`,
        form({ link, csrf }, cookie),
      );
      expect(again.status).toBe(409);
      expect((await fetch(at(links[1] ?? ''))).status, 'another link of an answered question').toBe(
        409,
      );
      const audit = await call(`${api}audit`);
      const entry = audit.body.entries.find(
        (e: { kind: string; token: string }) => e.kind === 'question-answered' && e.token === token,
      );
      expect(entry?.data).toMatchObject({ channel: 'email' });
      expect(JSON.stringify(entry?.data)).toContain('ada@example.com');
    } finally {
      await served.stop();
    }
  });
});

describe('email notifications in HTML (embedded default)', { timeout: 120_000 }, () => {
  it('an HTML part beside the text: the same content escaped, the decision links as buttons', async () => {
    const smtp = await startSmtpReceiver();
    const saved = { ...process.env };
    Object.assign(process.env, emailSettings(smtp, 'ada@example.com'));
    const storage = await openStorage({ dataDir: dataDir(), command: 'test', log: () => {} });
    try {
      // A gated call's question holds quotes: `Approve transfer_funds {"to":"PT50…",…}?`.
      const run = await startRun(storage, modelFromId('scripted:gated'), 'Pay', 'mail-html', {
        event: () => {},
      });
      if (run.status !== 'waiting') throw new Error(run.status);
      await new Deliverer(() => storage, deliveryFromEnv()).deliverDue();
    } finally {
      process.env = saved;
      await storage.close();
      await smtp.close();
    }
    expect(smtp.messages).toHaveLength(1);
    const message = unquote(smtp.messages[0] ?? '');
    expect(message).toMatch(/Content-Type: multipart\/alternative/);
    const [textPart = '', htmlPart = ''] = message.split(/Content-Type: text\/html/);
    expect(textPart).toContain('Content-Type: text/plain');
    expect(textPart).toContain(
      'Question: Approve transfer_funds {"to":"PT50000201231234567890154"',
    );
    expect(htmlPart).toContain(
      'Question: Approve transfer_funds {&#34;to&#34;:&#34;PT50000201231234567890154&#34;',
    );
    expect(htmlPart).not.toContain('{"to"');
    expect(htmlPart).toContain('Conversation: mail-html');
    const buttons = [
      ...htmlPart.matchAll(
        /<a href="(https:\/\/approvals\.example\.com\/decide\?link=[\w.-]+)" style="[^"]+">(\w+)<\/a>/g,
      ),
    ];
    expect(buttons.map((b) => b[2])).toEqual(['accept', 'decline']);
    // The same links as the text part's.
    for (const [, url] of buttons) expect(textPart).toContain(url);
    expect(htmlPart).toContain('<code>runner answer ');
  });
});

describe('notification metrics (embedded default)', { timeout: 120_000 }, () => {
  it('a wake counts its deliveries and dead letters by channel', async () => {
    const storage = await openStorage({ dataDir: dataDir(), command: 'test', log: () => {} });
    const metrics = new RunnerMetrics(() => storage);
    watching.telemetry = metrics;
    const quiet = { event: () => {} };
    const model = modelFromId('scripted:trip');
    // Nothing to resume (the runs wait): each wake delivers what is due, with one attempt.
    const wakeOnce = () =>
      wake(storage, {
        once: true,
        concurrency: 1,
        policy: leasePolicyFromEnv(),
        modelFor: () => model,
        observerFor: () => quiet,
        onResumed: () => {},
        onUnavailable: () => {},
        stop: new Promise<void>(() => {}),
        delivery: { ...deliveryFromEnv(), maxAttempts: 1 },
      });
    try {
      receiver.answer = () => 503;
      await startRun(storage, model, 'Plan', 'refused', quiet);
      await wakeOnce();
      receiver.answer = () => 204;
      await startRun(storage, model, 'Plan', 'delivered', quiet);
      await wakeOnce();
      const samples = parsePrometheus(await metrics.text()).samples;
      const at = (name: string) => sampleValue(samples, name, { channel: 'webhook' });
      expect({
        delivered: at('runner_notifications_delivered_total'),
        failed: at('runner_notifications_failed_total'),
      }).toEqual({ delivered: 1, failed: 1 });
      expect(await storage.notifications().list()).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ status: 'failed', channel: 'webhook' }),
          expect.objectContaining({ status: 'delivered', channel: 'webhook' }),
        ]),
      );
    } finally {
      watching.telemetry = undefined;
      await storage.close();
    }
  });
});
