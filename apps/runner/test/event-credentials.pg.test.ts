import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, json, listen, run, type Served, serve, until } from './serve-harness.js';
import { storageTargets, type Where } from './storage-targets.js';

// An open `GET /api/events` ends when what signed it in stops signing in: an operator's key
// revoked or rotated by `runner operators` (another process), a page session signed out, a
// page session expired. Until then it delivers; after, not one more event (issue 55, item 1).
// On the embedded default and on a PostgreSQL server.

const targets = await storageTargets();

const settings = { RUNNER_SESSION_TTL: '2h' };

type Stream = Awaited<ReturnType<typeof listen>>;

/** True when `stream` was ended by the server within `ms`. */
async function endsWithin(stream: Stream, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    stream.ended.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return ended;
}

const answeredEvents = (stream: Stream, token: string) =>
  stream.events.filter((e) => e.event === 'pause-answered' && e.data.token === token);

for (const target of targets) {
  describe.skipIf(target.skip)(
    `event streams end with their credential (${target.name})`,
    { timeout: 300_000 },
    () => {
      let where: Where;
      let served: Served | undefined;
      const keys: Record<string, string> = {};
      const tokens: string[] = [];
      const streams: Stream[] = [];
      const cli = (args: string[], env: Record<string, string> = {}) =>
        run([...args, '--json', ...where.args], { ...where.env, ...settings, ...env });
      const start = (env: Record<string, string> = {}) =>
        serve([...where.args, '--no-wake'], { ...where.env, ...settings, ...env });
      const api = (path: string) => new URL(path, served?.url).toString();
      const bearer = (who: string) => ({ authorization: `Bearer ${keys[who]}` });
      const open = async (headers: Record<string, string>) => {
        const stream = await listen(api('/api/events'), headers);
        streams.push(stream);
        expect(stream.response.status).toBe(200);
        await until(() => stream.events.some((e) => e.event === 'ready'), 'the stream ready');
        return stream;
      };
      const signIn = async (who: string) => {
        const signedIn = await fetch(api('/api/sign-in'), json({ key: keys[who] }));
        expect(signedIn.status).toBe(200);
        const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
        const { csrfToken } = (await signedIn.json()) as { csrfToken: string };
        return { cookie, csrfToken };
      };
      /** ada (never revoked) answers `token`; her own stream `witness` sees it. */
      const answerAndWitness = async (token: string, witness: Stream) => {
        const answered = await call(
          api(`/api/pauses/${token}/answer`),
          json({ action: 'accept', content: 'Lisbon' }, bearer('ada')),
        );
        expect(answered.status, JSON.stringify(answered.body)).toBe(200);
        await until(() => answeredEvents(witness, token).length > 0, 'the witness to see it');
      };

      beforeAll(async () => {
        where = await target.setUp();
        for (const name of ['ada', 'bob', 'cy', 'dee', 'eve']) {
          const added = await cli(['operators', 'add', name, '--role', 'admin']);
          expect(added.code, added.stderr).toBe(0);
          keys[name] = added.events.find((e) => e.type === 'operator-added')?.key as string;
        }
        for (let i = 0; i < 4; i++) {
          const started = await cli(['exec', 'Plan a trip', '--conversation', `ev-${i}`]);
          expect(started.code, started.stderr).toBe(0);
          tokens.push(started.events.find((e) => e.type === 'run-waiting')?.token as string);
        }
        served = await start();
      });
      afterAll(async () => {
        for (const stream of streams) await stream.close();
        await served?.stop();
        await where?.drop();
      });

      it('a key revoked by `runner operators revoke`: its streams (bearer and page session) end, and get nothing after', async () => {
        const witness = await open(bearer('ada'));
        const byKey = await open(bearer('bob'));
        const bySession = await open({ cookie: (await signIn('bob')).cookie });
        // While the key is live, its streams deliver.
        await answerAndWitness(tokens[0] as string, witness);
        await until(
          () => answeredEvents(byKey, tokens[0] as string).length > 0,
          "bob's stream to deliver",
        );
        await until(
          () => answeredEvents(bySession, tokens[0] as string).length > 0,
          "bob's session stream to deliver",
        );
        const revoked = await cli(['operators', 'revoke', 'bob']);
        expect(revoked.code, revoked.stderr).toBe(0);
        // An answer given after the revocation never reaches bob's streams.
        await answerAndWitness(tokens[1] as string, witness);
        expect(await endsWithin(byKey, 15_000)).toBe(true);
        expect(await endsWithin(bySession, 15_000)).toBe(true);
        for (const stream of [byKey, bySession]) {
          expect(answeredEvents(stream, tokens[1] as string)).toEqual([]);
          expect(stream.events.at(-1)?.event).toBe('signed-out');
        }
        // The witness goes on; a new stream of the revoked key is refused.
        expect(witness.events.some((e) => e.event === 'signed-out')).toBe(false);
        expect((await fetch(api('/api/events'), { headers: bearer('bob') })).status).toBe(401);
      });

      it('a key rotated by `runner operators rotate`: its stream ends without another event', async () => {
        const byKey = await open(bearer('cy'));
        expect((await cli(['operators', 'rotate', 'cy'])).code).toBe(0);
        // No event at all: the periodic check finds the rotation by itself.
        expect(await endsWithin(byKey, 15_000)).toBe(true);
        expect(byKey.events.map((e) => e.event)).toEqual(['ready', 'signed-out']);
      });

      it('a page session signed out: its stream ends at once, and gets nothing after', async () => {
        const witness = await open(bearer('ada'));
        const { cookie, csrfToken } = await signIn('dee');
        const other = await signIn('dee');
        const signedOut = await open({ cookie });
        const stillIn = await open({ cookie: other.cookie });
        const origin = new URL(served?.url ?? '').origin;
        const out = await call(
          api('/api/sign-out'),
          json({}, { cookie, origin, 'x-csrf-token': csrfToken }),
        );
        expect(out.status).toBe(200);
        expect(await endsWithin(signedOut, 5_000)).toBe(true);
        expect(signedOut.events.at(-1)?.event).toBe('signed-out');
        await answerAndWitness(tokens[2] as string, witness);
        expect(answeredEvents(signedOut, tokens[2] as string)).toEqual([]);
        // The same operator's other session was not signed out: its stream goes on.
        await until(
          () => answeredEvents(stillIn, tokens[2] as string).length > 0,
          'the other session to deliver',
        );
        expect(stillIn.events.some((e) => e.event === 'signed-out')).toBe(false);
      });

      it('a page session expired (RUNNER_SESSION_TTL=2s): its stream ends at the expiry', async () => {
        await served?.stop();
        served = await start({ RUNNER_SESSION_TTL: '2s' });
        const witness = await open(bearer('ada'));
        const { cookie } = await signIn('eve');
        const stream = await open({ cookie });
        const opened = Date.now();
        expect(await endsWithin(stream, 10_000)).toBe(true);
        // Not before the session's two seconds (less what signing in and opening took).
        expect(Date.now() - opened).toBeGreaterThan(500);
        expect(stream.events.at(-1)).toEqual({
          event: 'signed-out',
          data: { message: 'your session expired' },
        });
        await answerAndWitness(tokens[3] as string, witness);
        expect(answeredEvents(stream, tokens[3] as string)).toEqual([]);
        expect((await fetch(api('/api/events'), { headers: { cookie } })).status).toBe(401);
      });
    },
  );
}
