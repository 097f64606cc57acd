// The approval center's HTTP API driven as a hostile or broken client would (issue 55): text no
// database stores (a NUL, a lone surrogate, bytes that are not UTF-8) in answers, tokens,
// batches and queries must be refused as bad input (4xx), never answered as an outage (5xx),
// and change nothing; an open event stream must end, and deliver nothing more, once the
// credential that opened it stops signing in (a key revoked or rotated from outside, a
// session signed out or expired).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenEvents, type RawReply, sendBytes } from '@internal/pg-test';
import fc from 'fast-check';
import { modelFromId } from 'runner/dist/model/index.js';
import { type ServeHandle, startServe } from 'runner/dist/serve/index.js';
import { openStorage, type Storage } from 'runner/dist/storage/index.js';
import { knob } from '../knobs.js';
import type { Tally } from '../report.js';
import { exec, openRunnerStorage } from '../runner.js';
import { createDatabase } from '../server.js';

const RUNS = knob('RELIABILITY_FC_RUNS', 100, 40);
const ROUNDS = knob('RELIABILITY_STREAM_ROUNDS', 5, 2);
/** How long a stream may take to end after its credential did (the periodic check is 5 s). */
const END_WITHIN_MS = 12_000;

/** A string with a NUL or a lone surrogate somewhere in it. */
const unstorable = fc
  .tuple(
    fc.string({ maxLength: 40 }),
    fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '\u0000\u0000'),
    fc.string({ maxLength: 40 }),
  )
  .map(([before, bad, after]) => `${before}${bad}${after}`);

/** Bytes that are not UTF-8 (a lone continuation byte, an overlong form, a stray lead byte). */
const notUtf8 = fc.constantFrom(
  [0xff, 0xfe, 0xc0, 0x80],
  [0x80],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xc3],
);

const post = (url: string, value: unknown, headers: Record<string, string> = {}) =>
  sendBytes(url, 'POST', Buffer.from(JSON.stringify(value)), headers);

/** An event stream of `/api/events` that can say whether the server ended it within a time. */
async function openStream(url: string, headers: Record<string, string>) {
  const stream = await listenEvents(url, headers);
  return {
    ...stream,
    status: stream.response.status,
    ended: stream.endedByServer,
    endsWithin: (ms: number) => until(stream.endedByServer, ms),
  };
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return check();
}

/** One scenario on `storage`: the hostile input, then the streams' credentials. */
async function hostileHttp(tally: Tally, storage: Storage): Promise<void> {
  const question = await exec(storage, 'rel-http-input');
  const keys: Record<string, string> = {};
  const newOperator = async (name: string) => {
    keys[name] = (await storage.operators().add(name, ['admin'])).key;
  };
  await newOperator('ada');
  const server: ServeHandle = await startServe(storage, {
    port: 0,
    wake: false,
    modelFor: (id) => modelFromId(id),
    sessionTtlMs: 1_500,
  });
  const url = (path: string) => new URL(path, server.url).toString();
  const ada = { authorization: `Bearer ${keys.ada}` };
  /** The question still waits: nothing the refusals did answered it. */
  const stillWaits = async (label: string) => {
    const one = await sendBytes(url(`/api/pauses/${question}`), 'GET', undefined, ada);
    tally.check(one.status === 200, () => `${label}: the question no longer waits (${one.status})`);
  };
  /** A refusal as bad input: the status expected, never a 5xx. */
  const refused = (label: string, reply: RawReply, status: number) => {
    tally.cases++;
    tally.check(
      reply.status === status,
      () => `${label}: ${reply.status} ${reply.body.slice(0, 300)} (expected ${status})`,
    );
  };
  try {
    try {
      await fc.assert(
        fc.asyncProperty(unstorable, notUtf8, async (text, bytes) => {
          const answerUrl = url(`/api/pauses/${question}/answer`);
          refused('content', await post(answerUrl, { action: 'accept', content: text }, ada), 400);
          refused(
            'batch content',
            await post(
              url('/api/pauses/answer-batch'),
              { answers: [{ token: question, action: 'accept', content: text }] },
              ada,
            ),
            400,
          );
          const encoded = encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '')) || '%00';
          const token = encoded.includes('%00') ? encoded : `${encoded}%00`;
          refused(
            'token in the path',
            await sendBytes(url(`/api/pauses/${token}`), 'GET', undefined, ada),
            404,
          );
          refused(
            'answer to a token',
            await post(url(`/api/pauses/${token}/answer`), { action: 'accept', content: 'x' }, ada),
            404,
          );
          refused(
            'batch token',
            await post(
              url('/api/pauses/answer-batch'),
              {
                answers: [
                  { token: question, action: 'accept', content: 'Lisbon' },
                  { token: text, action: 'accept', content: 'x' },
                ],
              },
              ada,
            ),
            404,
          );
          refused(
            'query',
            await sendBytes(url(`/api/audit?conversation=${token}`), 'GET', undefined, ada),
            400,
          );
          const body = Buffer.concat([
            Buffer.from('{"action":"accept","content":"a'),
            Buffer.from(bytes),
            Buffer.from('b"}'),
          ]);
          refused('not UTF-8', await sendBytes(answerUrl, 'POST', body, ada), 400);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    } catch (error) {
      tally.fail(`hostile text: ${String((error as Error).message).slice(0, 1200)}`);
    }
    await stillWaits('after the hostile text');

    // The streams: each round, a key revoked and one rotated from outside the server (the
    // store, as `runner operators` in another process), a session signed out, one expired.
    for (let round = 0; round < ROUNDS; round++) {
      const token = await exec(storage, `rel-http-stream-${round}`);
      const [revoked, rotated, out, expiring] = ['rev', 'rot', 'out', 'exp'].map(
        (what) => `${what}-${round}`,
      ) as [string, string, string, string];
      for (const name of [revoked, rotated, out, expiring]) await newOperator(name);
      const session = async (name: string) => {
        const signedIn = await fetch(url('/api/sign-in'), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key: keys[name] }),
        });
        const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
        const { csrfToken } = (await signedIn.json()) as { csrfToken: string };
        return { cookie, csrfToken };
      };
      const witness = await openStream(url('/api/events'), ada);
      const byRevoked = await openStream(url('/api/events'), {
        authorization: `Bearer ${keys[revoked]}`,
      });
      const byRotated = await openStream(url('/api/events'), {
        authorization: `Bearer ${keys[rotated]}`,
      });
      const outSession = await session(out);
      const bySignedOut = await openStream(url('/api/events'), { cookie: outSession.cookie });
      const byExpiring = await openStream(url('/api/events'), {
        cookie: (await session(expiring)).cookie,
      });
      const streams = { revoked: byRevoked, rotated: byRotated, 'signed out': bySignedOut };
      const all = [witness, ...Object.values(streams), byExpiring];
      try {
        await until(() => all.every((s) => s.events.some((e) => e.event === 'ready')), 10_000);
        await storage.operators().revoke(revoked);
        await storage.operators().rotate(rotated);
        const signedOut = await post(
          url('/api/sign-out'),
          {},
          {
            cookie: outSession.cookie,
            origin: new URL(server.url).origin,
            'x-csrf-token': outSession.csrfToken,
          },
        );
        tally.check(signedOut.status === 200, () => `sign-out: ${signedOut.status}`);
        // Past the session's 1.5 s: then an answer that no ended stream may see.
        await new Promise((r) => setTimeout(r, 1_700));
        const answered = await post(
          url(`/api/pauses/${token}/answer`),
          { action: 'accept', content: 'Lisbon' },
          ada,
        );
        tally.check(answered.status === 200, () => `answer: ${answered.status} ${answered.body}`);
        const seen = (s: typeof witness) =>
          s.events.some((e) => e.event === 'pause-answered' && e.data.token === token);
        tally.check(await until(() => seen(witness), 10_000), () => 'the witness saw no answer');
        for (const [what, stream] of [
          ...Object.entries(streams),
          ['expired', byExpiring],
        ] as const) {
          tally.cases++;
          tally.check(
            await stream.endsWithin(END_WITHIN_MS),
            () => `round ${round}: the stream of a ${what} credential is still open`,
          );
          tally.check(
            !seen(stream),
            () => `round ${round}: the stream of a ${what} credential was sent a later answer`,
          );
          tally.check(
            stream.events.at(-1)?.event === 'signed-out',
            () => `round ${round}: the ${what} stream ended without signed-out`,
          );
        }
        tally.check(!witness.ended(), () => `round ${round}: the witness's stream ended`);
      } finally {
        for (const stream of all) await stream.close();
      }
    }
  } finally {
    await server.close();
  }
}

/** On the embedded default: PGlite in a data folder of its own. */
export async function hostileHttpEmbedded(tally: Tally): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'x-rel-http-'));
  const storage = await openStorage({ dataDir: dir, command: 'reliability', log: () => {} });
  try {
    await hostileHttp(tally, storage);
  } finally {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** On PostgreSQL: a database of its own on the test server. */
export async function hostileHttpPostgres(tally: Tally): Promise<void> {
  const database = await createDatabase();
  const storage = await openRunnerStorage(database.url);
  try {
    await hostileHttp(tally, storage);
  } finally {
    await storage.close();
    await database.drop();
  }
}
