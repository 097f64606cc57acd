import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  dataDirs,
  exec,
  json,
  listen,
  run,
  type Served,
  serve,
  until,
} from './serve-harness.js';

const dataDir = dataDirs();

/** A raw request, for headers fetch will not let a test set (Host). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('runner serve: the API on the embedded default (no wake)', () => {
  let server: Served;
  const tokens: Record<string, string> = {};
  const data = dataDir();

  beforeAll(async () => {
    for (const c of ['ans', 'bat1', 'bat2', 'stop']) tokens[c] = await exec(`c-${c}`, { data });
    server = await serve(['--no-wake', '--data', data]);
  }, 300_000);
  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
  });

  const api = (p: string) => new URL(p, server.url).toString();
  const pending = async () =>
    (await call(api('/api/pauses'))).body.pauses as Array<Record<string, unknown>>;
  const isPending = async (token: string) => (await pending()).some((p) => p.token === token);

  it('GET /api/pauses lists every pending question in FIFO order with its fields', async () => {
    const { status, body } = await call(api('/api/pauses'));
    expect(status).toBe(200);
    expect(body.pauses.map((p: { token: string }) => p.token)).toEqual(Object.values(tokens));
    expect(body.pauses[0]).toEqual({
      token: tokens.ans,
      conversationId: 'c-ans',
      kind: 'ask_user',
      question: 'Where would you like to go?',
      options: ['Lisbon', 'Kyoto', 'Reykjavik'],
      priority: 1,
      priorityLabel: 'high',
      proxiedFromChildId: '',
      source: null,
      createdAt: expect.any(String),
      ageMs: expect.any(Number),
      deadline: null,
      reminder: null,
      escalation: null,
      quorum: null,
      canAnswer: true,
      readOnly: null,
      gated: null,
    });
    const limited = await call(api('/api/pauses?limit=2'));
    expect(limited.body.pauses).toHaveLength(2);
  });

  it('a bad limit is 400 with the error shape', async () => {
    for (const limit of ['0', 'abc', '1.5', '100000']) {
      const { status, body } = await call(api(`/api/pauses?limit=${limit}`));
      expect(status).toBe(400);
      expect(body.error).toEqual({
        code: 'invalid_request',
        message: expect.stringContaining('limit'),
      });
    }
  });

  it('GET /api/pauses/:token returns the question; an unknown token is 404', async () => {
    const found = await call(api(`/api/pauses/${tokens.ans}`));
    expect(found.status).toBe(200);
    expect(found.body.pause).toMatchObject({ token: tokens.ans, conversationId: 'c-ans' });
    const missing = await call(api('/api/pauses/no-such-token'));
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('pause_not_found');
    // The packages' "[@x/...]" origin is not the API's to show.
    const answered = await call(
      api('/api/pauses/no-such-token/answer'),
      json({ action: 'accept', content: 'x' }),
    );
    for (const res of [missing, answered]) {
      expect(res.body.error.message).toContain('no-such-token');
      expect(res.body.error.message).not.toContain('[@x/');
    }
  });

  it('an invalid action is 400 and changes nothing', async () => {
    const bad = await call(
      api(`/api/pauses/${tokens.ans}/answer`),
      json({ action: 'maybe', content: 'x' }),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_answer');
    const extra = await call(
      api(`/api/pauses/${tokens.ans}/answer`),
      json({ action: 'accept', content: 'x', more: 1 }),
    );
    expect(extra.status).toBe(400);
    const notJson = await call(api(`/api/pauses/${tokens.ans}/answer`), json('{"action":'));
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe('invalid_json');
    expect(await isPending(tokens.ans as string)).toBe(true);
  });

  it('a write that is not application/json is 415 and changes nothing', async () => {
    const res = await call(api(`/api/pauses/${tokens.ans}/answer`), {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ action: 'accept', content: 'Lisbon' }),
    });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
    const form = await call(api(`/api/pauses/${tokens.ans}/answer`), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=accept&content=Lisbon',
    });
    expect(form.status).toBe(415);
    expect(await isPending(tokens.ans as string)).toBe(true);
  });

  it('a cross-origin write is 403 and changes nothing', async () => {
    for (const origin of ['http://evil.example', 'null', `http://localhost:1`]) {
      const res = await call(
        api(`/api/pauses/${tokens.ans}/answer`),
        json({ action: 'accept', content: 'Lisbon' }, { origin }),
      );
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('cross_origin');
    }
    const batch = await call(
      api('/api/pauses/answer-batch'),
      json(
        { answers: [{ token: tokens.ans, action: 'accept', content: 'x' }] },
        { origin: 'http://evil.example' },
      ),
    );
    expect(batch.status).toBe(403);
    const stop = await call(
      api('/api/conversations/c-ans/stop'),
      json({}, { origin: 'http://evil.example' }),
    );
    expect(stop.status).toBe(403);
    expect(await isPending(tokens.ans as string)).toBe(true);
  });

  it('an oversized body is 413 and changes nothing', async () => {
    const content = 'x'.repeat(300 * 1024);
    const res = await call(
      api(`/api/pauses/${tokens.ans}/answer`),
      json({ action: 'accept', content }),
    );
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    expect(await isPending(tokens.ans as string)).toBe(true);
  });

  it('a request addressed to a non-local name is refused (DNS rebinding)', async () => {
    const res = await rawGet(api('/api/pauses'), {
      host: `evil.example:${new URL(server.url).port}`,
    });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error.code).toBe('forbidden_host');
    const local = await rawGet(api('/api/pauses'), {
      host: `localhost:${new URL(server.url).port}`,
    });
    expect(local.status).toBe(200);
  });

  it('POST answer resolves once: the same-origin write succeeds, the second is 409 with how it was answered', async () => {
    const origin = new URL(server.url).origin;
    const ok = await call(
      api(`/api/pauses/${tokens.ans}/answer`),
      json({ action: 'accept', content: 'Lisbon' }, { origin }),
    );
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ token: tokens.ans, answer: { action: 'accept', content: 'Lisbon' } });
    const again = await call(api(`/api/pauses/${tokens.ans}/answer`), json({ action: 'decline' }));
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      code: 'already_answered',
      message: expect.stringContaining(
        `question ${tokens.ans} was already answered: accept "Lisbon"`,
      ),
      answered: [{ token: tokens.ans, answer: { action: 'accept', content: 'Lisbon' } }],
    });
    // Its token now says who answered it, and when: 409 as for a second answer.
    const gone = await call(api(`/api/pauses/${tokens.ans}`));
    expect(gone.status).toBe(409);
    expect(gone.body.error).toMatchObject({
      code: 'already_answered',
      answered: [{ token: tokens.ans }],
    });
  });

  it('a batch is atomic: one unknown token and nothing is answered; then all at once', async () => {
    const answers = [
      { token: tokens.bat1, action: 'accept', content: 'Kyoto' },
      { token: 'no-such-token', action: 'accept', content: 'x' },
    ];
    const failed = await call(api('/api/pauses/answer-batch'), json({ answers }));
    expect(failed.status).toBe(404);
    expect(failed.body.error).toMatchObject({ code: 'pause_not_found', tokens: ['no-such-token'] });
    expect(await isPending(tokens.bat1 as string)).toBe(true);

    const answered = await call(
      api('/api/pauses/answer-batch'),
      json({ answers: [answers[0], { ...answers[0] }] }),
    );
    expect(answered.status).toBe(400);
    expect(answered.body.error.code).toBe('invalid_answer');
    const alreadyAnswered = await call(
      api('/api/pauses/answer-batch'),
      json({ answers: [answers[0], { token: tokens.ans, action: 'decline', content: '' }] }),
    );
    expect(alreadyAnswered.status).toBe(409);
    expect(alreadyAnswered.body.error).toMatchObject({
      code: 'already_answered',
      answered: [{ token: tokens.ans, answer: { action: 'accept', content: 'Lisbon' } }],
    });
    expect(await isPending(tokens.bat1 as string)).toBe(true);

    // The live feed reports both answers of the batch, once each.
    const stream = await listen(api('/api/events'));
    expect(stream.response.headers.get('content-type')).toContain('text/event-stream');
    await until(() => stream.events.some((e) => e.event === 'ready'), 'the ready event');
    const ok = await call(
      api('/api/pauses/answer-batch'),
      json({
        answers: [answers[0], { token: tokens.bat2, action: 'decline', content: 'not now' }],
      }),
    );
    expect(ok.status).toBe(200);
    expect(ok.body.answered).toBe(2);
    await until(
      () => stream.events.filter((e) => e.event === 'pause-answered').length === 2,
      'two pause-answered events',
    );
    expect(stream.events.filter((e) => e.event === 'pause-answered').map((e) => e.data)).toEqual(
      expect.arrayContaining([
        { type: 'pause-answered', token: tokens.bat1, conversationId: 'c-bat1', action: 'accept' },
        { type: 'pause-answered', token: tokens.bat2, conversationId: 'c-bat2', action: 'decline' },
      ]),
    );
    await call(api('/api/pauses'));
    expect(stream.events.filter((e) => e.event === 'pause-answered')).toHaveLength(2);
    await stream.close();
    expect(await isPending(tokens.bat1 as string)).toBe(false);
    expect(await isPending(tokens.bat2 as string)).toBe(false);
  });

  it('an empty or invalid batch is 400', async () => {
    expect((await call(api('/api/pauses/answer-batch'), json({ answers: [] }))).status).toBe(400);
    expect((await call(api('/api/pauses/answer-batch'), json([]))).status).toBe(400);
  });

  it('GET /api/recent shows answered questions with their answers and state', async () => {
    const { status, body } = await call(api('/api/recent?limit=10'));
    expect(status).toBe(200);
    const ans = body.recent.find((r: { token: string }) => r.token === tokens.ans);
    // No wake loop in this server: answered, waiting to be resumed.
    expect(ans).toMatchObject({
      status: 'answered',
      answer: { action: 'accept', content: 'Lisbon' },
      outcome: null,
      answeredAt: expect.any(String),
    });
    const stop = body.recent.find((r: { token: string }) => r.token === tokens.stop);
    expect(stop).toMatchObject({ status: 'pending', answer: null });
    expect((await call(api('/api/recent?limit=-1'))).status).toBe(400);
  });

  it('POST /api/conversations/:id/stop closes its questions and runs', async () => {
    const res = await call(api('/api/conversations/c-stop/stop'), json({}));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ conversationId: 'c-stop', runs: 1, pauses: 1, continuations: 1 });
    expect(await isPending(tokens.stop as string)).toBe(false);
    const { body } = await call(api('/api/recent'));
    expect(body.recent.find((r: { token: string }) => r.token === tokens.stop)).toMatchObject({
      status: 'resumed',
      outcome: 'cancelled',
      answer: { action: 'cancel' },
    });
    const again = await call(api('/api/conversations/c-stop/stop'), json({}));
    expect(again.body).toMatchObject({ pauses: 0, continuations: 0 });
    const text = await call(api('/api/conversations/c-stop/stop'), { method: 'POST' });
    expect(text.status).toBe(415);
    const unsafe = await call(api('/api/conversations/x%1B%5B2J/stop'), json({}));
    expect(unsafe.status).toBe(400);
    expect(unsafe.body.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('conversation id "x\\u001b[2J" is not a safe id'),
    });
  });

  it('POST /api/conversations/:id/stop of an unknown conversation is 404, as `runner stop` is exit 3', async () => {
    const res = await call(api('/api/conversations/no-such-conversation/stop'), json({}));
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual({
      code: 'not_found',
      message: 'no conversation no-such-conversation: no run of it is recorded',
    });
    // The server holds its data folder: the CLI's stop goes through it, and says the same.
    const cli = await run(['stop', 'no-such-conversation', '--data', data]);
    expect(cli.code).toBe(3);
    expect(cli.stderr).toContain(res.body.error.message);
  });

  it('a second serve on its port is one line that says so, exit 4, and nothing after it', async () => {
    const { port } = new URL(server.url);
    const second = await run(['serve', '--port', port, '--data', dataDir()]);
    expect(second.code).toBe(4);
    expect(second.stderr).toBe(
      `error: port ${port} on 127.0.0.1 is in use: stop what listens there, or give another --port (0 picks a free one)\n`,
    );
  });

  it('unknown routes are 404 and wrong methods 405, in the error shape', async () => {
    const missing = await call(api('/api/nope'));
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    const method = await call(api('/api/pauses'), json({}));
    expect(method.status).toBe(405);
    expect(method.body.error.code).toBe('method_not_allowed');
    expect(method.headers.get('allow')).toBe('GET');
    expect((await call(api('/../../etc/passwd'))).status).toBe(404);
    expect((await call(api('/nothing.js'))).status).toBe(404);
  });

  it('serves the page with a strict content security policy', async () => {
    const page = await fetch(server.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="app.js">');
    const script = await fetch(new URL('/app.js', server.url));
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('javascript');
    expect(await script.text()).not.toContain('innerHTML');
  });
});

describe('runner serve: access token', () => {
  it('refuses to start on a non-loopback address without a token', {
    timeout: 60_000,
  }, async () => {
    const result = await run(['serve', '--host', '0.0.0.0', '--port', '0', '--data', dataDir()]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--token');
    expect(result.stdout).not.toContain('listening');
  });

  it('checks the token on every API request: Bearer header, or a page session signed in with it', {
    timeout: 120_000,
  }, async () => {
    const server = await serve(['--host', '0.0.0.0', '--no-wake', '--data', dataDir()], {
      RUNNER_TOKEN: 's3cret-token',
    });
    try {
      const url = (p: string) => new URL(p, server.url.replace('0.0.0.0', '127.0.0.1')).toString();
      const attempts: Record<string, string>[] = [
        {},
        { authorization: 'Bearer wrong' },
        { authorization: 's3cret-token' },
      ];
      for (const headers of attempts) {
        const res = await call(url('/api/pauses'), { headers });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
      }
      expect((await fetch(url('/api/events'))).status).toBe(401);
      // The page's files hold no data: anyone gets them, and the page asks for a key.
      for (const page of ['/', '/app.js', '/sign-in.js']) {
        expect((await fetch(url(page))).status, page).toBe(200);
      }
      const session = await call(url('/api/session'));
      expect(session.body).toMatchObject({ signedIn: false, methods: ['key'] });
      const write = await call(
        url('/api/pauses/x/answer'),
        json({ action: 'accept', content: 'x' }),
      );
      expect(write.status).toBe(401);

      const ok = await call(url('/api/pauses'), {
        headers: { authorization: 'Bearer s3cret-token' },
      });
      expect(ok.status).toBe(200);
      expect(ok.body.pauses).toEqual([]);

      expect((await call(url('/api/sign-in'), json({ key: 'wrong' }))).status).toBe(401);
      const signIn = await fetch(url('/api/sign-in'), json({ key: 's3cret-token' }));
      expect(signIn.status).toBe(200);
      const cookie = signIn.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Strict/);
      // The cookie holds a random session id, never the token.
      expect(cookie).not.toContain('s3cret-token');
      const withCookie = await call(url('/api/pauses'), {
        headers: { cookie: cookie.split(';')[0] ?? '' },
      });
      expect(withCookie.status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe('runner serve: hosts the wake loop on the embedded default', () => {
  it('answers requests and reports the answer while a resumed model call runs', {
    timeout: 240_000,
  }, async () => {
    const data = dataDir();
    const token = await exec('c-slow', { data });
    // The resumed model call takes a minute: everything below happens during it.
    const server = await serve(['--data', data], { RUNNER_SCRIPTED_DELAY_MS: '60000' });
    try {
      const api = (p: string) => new URL(p, server.url).toString();
      const stream = await listen(api('/api/events'));
      await until(() => stream.events.some((e) => e.event === 'ready'), 'the ready event');
      const res = await call(
        api(`/api/pauses/${token}/answer`),
        json({ action: 'accept', content: 'Kyoto' }),
      );
      expect(res.status).toBe(200);
      const running = await until(async () => {
        const { body } = await call(api('/api/recent'));
        const row = body.recent.find((r: { token: string }) => r.token === token);
        return row?.run?.status === 'running' && row;
      }, 'the run to be claimed');
      expect(running).toMatchObject({ status: 'answered', run: { attempts: 1 } });
      await until(
        () => stream.events.some((e) => e.event === 'pause-answered'),
        'pause-answered on the feed',
      );
      const pauses = await call(api('/api/pauses'));
      expect(pauses.status).toBe(200);
      // Still running: the requests above were served during the model call, not after it.
      const { body } = await call(api('/api/recent'));
      expect(body.recent.find((r: { token: string }) => r.token === token)?.run?.status).toBe(
        'running',
      );
      expect(stream.events.some((e) => e.event === 'run-resumed')).toBe(false);
      await stream.close();
    } finally {
      // Killed, not stopped: a stop would wait for the minute-long call to finish.
      server.child.kill('SIGKILL');
      await server.stop();
    }
  });

  it('an answer given through the API is resumed by the server itself, and the feed says so', {
    timeout: 240_000,
  }, async () => {
    const data = dataDir();
    const token = await exec('c-wake', { data });
    const server = await serve(['--data', data]);
    try {
      const api = (p: string) => new URL(p, server.url).toString();
      const stream = await listen(api('/api/events'));
      await until(() => stream.events.some((e) => e.event === 'ready'), 'the ready event');
      const res = await call(
        api(`/api/pauses/${token}/answer`),
        json({ action: 'accept', content: 'Reykjavik' }),
      );
      expect(res.status).toBe(200);
      const created = await until(
        () => stream.events.find((e) => e.event === 'pause-created'),
        'the resumed run to ask its next question',
      );
      expect(created.data).toMatchObject({
        conversationId: 'c-wake',
        question: 'How many days in Reykjavik?',
      });
      expect(stream.events.map((e) => e.event)).toEqual(
        expect.arrayContaining(['pause-answered', 'run-resumed', 'pause-created']),
      );
      expect(stream.events.find((e) => e.event === 'run-resumed')?.data).toMatchObject({
        token,
        action: 'accept',
        outcome: 'waiting',
      });
      // The claim is said before the turn's end, as `runner wake` says it.
      const said = server
        .stdout()
        .split('\n')
        .filter((line) => line.includes(token))
        .map((line) => JSON.parse(line).type);
      expect(said).toEqual(['run-claimed', 'resumed']);
      const recent = await call(api('/api/recent'));
      expect(recent.body.recent.find((r: { token: string }) => r.token === token)).toMatchObject({
        status: 'resumed',
        outcome: 'waiting',
      });

      // Answer the rest; the run completes and the feed reports it.
      const first = async () =>
        (await call(api('/api/pauses'))).body.pauses[0]?.token as string | undefined;
      let next = await until(first, 'the next question');
      for (const content of ['5', 'ok']) {
        const res = await call(
          api(`/api/pauses/${next}/answer`),
          json({ action: 'accept', content }),
        );
        expect(res.status).toBe(200);
        if (content === '5') {
          const answered = next;
          next = await until(async () => {
            const token = await first();
            return token !== answered && token;
          }, 'the approval');
        }
      }
      const completed = await until(
        () => stream.events.find((e) => e.event === 'run-completed'),
        'run-completed',
      );
      expect(completed.data).toMatchObject({ conversationId: 'c-wake' });
      expect(server.stdout()).toContain('"type":"resumed"');
      await stream.close();
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
