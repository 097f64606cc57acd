import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, json, run, type Served, serve, until } from './serve-harness.js';
import { storageTargets, type Where } from './storage-targets.js';

// The page's sign-in over HTTP (no browser): a session cookie, its CSRF token, sign-out,
// expiry, rotated and revoked operators, and the failed sign-ins' rate limits and audit
// entries; on the embedded default and on a PostgreSQL server.

const targets = await storageTargets();

const settings = {
  // Only finance may answer the trip's first question (an ask_user).
  RUNNER_AUDIENCE: 'ask_user=finance',
  RUNNER_AUDIT_KEY: 'a-test-audit-key-of-32-bytes-000',
  RUNNER_SESSION_TTL: '2h',
  RUNNER_SIGN_IN_FAILURES: '5',
  RUNNER_SIGN_IN_FAILURES_PER_NAME: '3',
};

/** The `name=value` of a Set-Cookie header, to send back as a Cookie header. */
const pairOf = (setCookie: string) => setCookie.split(';')[0] ?? '';

for (const target of targets) {
  describe.skipIf(target.skip)(`page sessions (${target.name})`, { timeout: 300_000 }, () => {
    let where: Where;
    let served: Served | undefined;
    const keys: Record<string, string> = {};
    const cookies: Record<string, string> = {};
    const csrf: Record<string, string> = {};
    const tokens: string[] = [];
    const cli = (args: string[], env: Record<string, string> = {}) =>
      run([...args, '--json', ...where.args], { ...where.env, ...settings, ...env });
    const start = (env: Record<string, string> = {}, args: string[] = []) =>
      serve([...where.args, '--no-wake', ...args], { ...where.env, ...settings, ...env });
    const api = (path: string) => new URL(path, served?.url).toString();
    const origin = () => new URL(served?.url ?? '').origin;
    const asSession = (who: string, extra: Record<string, string> = {}) => ({
      cookie: cookies[who] as string,
      ...extra,
    });
    const answer = (token: string, headers: Record<string, string>) =>
      call(
        api(`/api/pauses/${token}/answer`),
        json({ action: 'accept', content: 'Lisbon' }, headers),
      );
    const isPending = async (token: string) =>
      (await call(api('/api/pauses'), { headers: asSession('ada') })).body.pauses.some(
        (p: { token: string }) => p.token === token,
      );

    beforeAll(async () => {
      where = await target.setUp();
      for (const [name, role] of [
        ['ada', 'admin'],
        ['bob', 'finance'],
        ['vic', 'viewer'],
      ] as const) {
        const added = await cli(['operators', 'add', name, '--role', role]);
        expect(added.code, added.stderr).toBe(0);
        keys[name] = added.events.find((e) => e.type === 'operator-added')?.key as string;
      }
      for (const c of ['s-1', 's-2']) {
        const started = await cli(['exec', 'Plan a trip', '--conversation', c]);
        expect(started.code, started.stderr).toBe(0);
        tokens.push(started.events.find((e) => e.type === 'run-waiting')?.token as string);
      }
      served = await start();
    });
    afterAll(async () => {
      await served?.stop();
      await where?.drop();
    });

    it('signs in with a key: an HttpOnly, SameSite=Strict session cookie that holds no key, and who is signed in', async () => {
      expect((await call(api('/api/session'))).body).toMatchObject({
        signedIn: false,
        methods: ['key'],
      });
      for (const who of ['ada', 'bob', 'vic']) {
        const signedIn = await fetch(
          api('/api/sign-in'),
          json({ key: keys[who] }, { origin: origin() }),
        );
        expect(signedIn.status, who).toBe(200);
        const setCookie = signedIn.headers.get('set-cookie') ?? '';
        expect(setCookie).toMatch(
          /^runner_session=[\w-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=7200$/,
        );
        expect(setCookie).not.toContain(keys[who]);
        cookies[who] = pairOf(setCookie);
        const body = (await signedIn.json()) as { csrfToken: string };
        csrf[who] = body.csrfToken;
        const session = await call(api('/api/session'), { headers: asSession(who) });
        expect(session.body).toMatchObject({
          signedIn: true,
          name: who,
          access: { ada: 'admin', bob: 'operator', vic: 'viewer' }[who],
          signedInWith: 'key',
          csrfToken: body.csrfToken,
          expiresAt: expect.any(String),
        });
      }
      expect(new Set(Object.values(csrf)).size).toBe(3);
      // A sign-in from another site's page is refused like any write from it.
      const crossSite = await call(
        api('/api/sign-in'),
        json({ key: keys.ada }, { origin: 'https://evil.example' }),
      );
      expect(crossSite.status).toBe(403);
      expect(crossSite.body.error.code).toBe('cross_origin');
    });

    it('says per question whether the session may answer it: a viewer may not', async () => {
      const canAnswer = async (who: string) =>
        (await call(api('/api/pauses'), { headers: asSession(who) })).body.pauses.map(
          (p: { canAnswer: boolean }) => p.canAnswer,
        );
      expect(await canAnswer('vic')).toEqual([false, false]);
      expect(await canAnswer('bob')).toEqual([true, true]);
      expect(await canAnswer('ada')).toEqual([true, true]);
      const one = await call(api(`/api/pauses/${tokens[0]}`), { headers: asSession('vic') });
      expect(one.body.pause.canAnswer).toBe(false);
    });

    it('a cookie write without its CSRF token, with another, from another origin or by a viewer is 403 and changes nothing', async () => {
      const [token = '', other = ''] = tokens;
      const refusals: Array<[Record<string, string>, string, string]> = [
        [asSession('bob', { origin: origin() }), 'forbidden', 'CSRF token'],
        [
          asSession('bob', { origin: origin(), 'x-csrf-token': csrf.vic as string }),
          'forbidden',
          'not this session',
        ],
        [
          asSession('bob', { origin: 'https://evil.example', 'x-csrf-token': csrf.bob as string }),
          'cross_origin',
          'own page',
        ],
        [
          asSession('vic', { origin: origin(), 'x-csrf-token': csrf.vic as string }),
          'forbidden',
          'viewer',
        ],
      ];
      for (const [headers, code, says] of refusals) {
        const refused = await answer(token, headers);
        expect(refused.status, says).toBe(403);
        expect(refused.body.error.code, says).toBe(code);
        expect(refused.body.error.message, says).toContain(says);
      }
      expect(await isPending(token)).toBe(true);
      const accepted = await answer(
        token,
        asSession('bob', { origin: origin(), 'x-csrf-token': csrf.bob as string }),
      );
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
      // A Bearer key is no cookie a browser sends by itself: no CSRF token needed.
      const bearer = await answer(other, { authorization: `Bearer ${keys.bob}` });
      expect(bearer.status, JSON.stringify(bearer.body)).toBe(200);
      const recent = await call(api('/api/audit'), { headers: asSession('ada') });
      const answered = recent.body.entries.filter(
        (e: { kind: string }) => e.kind === 'question-answered',
      );
      expect(answered.map((e: { data: object }) => e.data)).toEqual([
        expect.objectContaining({ by: 'bob', channel: 'page', signedInWith: 'key' }),
        expect.objectContaining({ by: 'bob', channel: 'api', signedInWith: 'key' }),
      ]);
    });

    it('sign-out ends the session on the server: the old cookie is refused afterwards', async () => {
      const signedIn = await fetch(api('/api/sign-in'), json({ key: keys.ada }));
      const cookie = pairOf(signedIn.headers.get('set-cookie') ?? '');
      const { csrfToken } = (await signedIn.json()) as { csrfToken: string };
      const forged = await call(api('/api/sign-out'), json({}, { cookie, origin: origin() }));
      expect(forged.status).toBe(403);
      expect((await call(api('/api/pauses'), { headers: { cookie } })).status).toBe(200);
      const out = await fetch(
        api('/api/sign-out'),
        json({}, { cookie, origin: origin(), 'x-csrf-token': csrfToken }),
      );
      expect(out.status).toBe(200);
      expect(out.headers.get('set-cookie')).toMatch(/^runner_session=; .*Max-Age=0/);
      const after = await call(api('/api/pauses'), { headers: { cookie } });
      expect(after.status).toBe(401);
      expect(after.body.error.message).toContain('your session has ended');
      expect((await call(api('/api/session'), { headers: { cookie } })).body.signedIn).toBe(false);
    });

    it('failed sign-ins are 429 with Retry-After past the limit per operator, then per address', async () => {
      // bob's key id with a wrong secret: a failed sign-in as bob.
      const wrongBob = `${(keys.bob as string).slice(0, 24)}${'x'.repeat(43)}`;
      for (let i = 0; i < 3; i++) {
        const failed = await call(api('/api/sign-in'), json({ key: wrongBob }));
        expect(failed.status).toBe(401);
        expect(failed.body.error.message).toContain(
          "not the server's token nor a live operator's key",
        );
      }
      const limited = await call(api('/api/sign-in'), json({ key: keys.bob }));
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe('rate_limited');
      expect(limited.body.error.message).toContain('as bob');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another operator still signs in from here: 3 of the address's 5.
      expect((await call(api('/api/sign-in'), json({ key: keys.ada }))).status).toBe(200);
      for (const key of ['nobody', 'runner_0000000000000000_nope']) {
        expect((await call(api('/api/sign-in'), json({ key }))).status).toBe(401);
      }
      const fromHere = await call(api('/api/sign-in'), json({ key: keys.ada }));
      expect(fromHere.status).toBe(429);
      expect(fromHere.body.error.message).toContain('from this address');
      // A Bearer key from this address waits as well.
      const bearer = await call(api('/api/pauses'), {
        headers: { authorization: `Bearer ${keys.ada}` },
      });
      expect(bearer.status).toBe(429);
    });

    it('each failed sign-in is in the audit log, with its source, the operator named and why', async () => {
      expect(await served?.stop()).toBe(0);
      served = undefined;
      const listed = await cli(['audit']);
      expect(listed.code, listed.stderr).toBe(0);
      const failed = listed.events
        .filter((e) => e.type === 'audit-entry' && e.kind === 'app-event')
        .map((e) => e.data as Record<string, unknown>)
        // The operators added before are app events too.
        .filter((data) => data.event === 'sign-in-failed');
      expect(failed).toEqual([
        ...Array.from({ length: 3 }, () => ({
          event: 'sign-in-failed',
          source: '127.0.0.1',
          name: 'bob',
          why: 'not a live key of bob (wrong, rotated or revoked)',
          signedInWith: 'key',
        })),
        ...Array.from({ length: 2 }, () => ({
          event: 'sign-in-failed',
          source: '127.0.0.1',
          why: "not the server's token nor any operator's key",
          signedInWith: 'key',
        })),
      ]);
      expect((await cli(['audit', 'verify'])).code).toBe(0);
    });

    it('sessions outlive a restart, end when their operator is rotated or revoked, and expire', async () => {
      expect((await cli(['operators', 'rotate', 'bob'])).code).toBe(0);
      expect((await cli(['operators', 'revoke', 'vic'])).code).toBe(0);
      // Behind TLS: the cookie is Secure and __Host- named, so no other site of the domain sets it.
      served = await start({ RUNNER_SESSION_TTL: '1s' }, [
        '--public-url',
        'https://approvals.example.com',
      ]);
      const secure = (who: string) => ({
        cookie: (cookies[who] as string).replace('runner_session=', '__Host-runner_session='),
      });
      expect((await call(api('/api/pauses'), { headers: secure('ada') })).status).toBe(200);
      for (const who of ['bob', 'vic']) {
        const ended = await call(api('/api/pauses'), { headers: secure(who) });
        expect(ended.status, who).toBe(401);
      }
      const signedIn = await fetch(api('/api/sign-in'), json({ key: keys.ada }));
      const setCookie = signedIn.headers.get('set-cookie') ?? '';
      expect(setCookie).toMatch(
        /^__Host-runner_session=[\w-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=1; Secure$/,
      );
      const cookie = pairOf(setCookie);
      await until(
        async () => (await call(api('/api/pauses'), { headers: { cookie } })).status === 401,
        'the one-second session to expire',
      );
    });
  });
}
