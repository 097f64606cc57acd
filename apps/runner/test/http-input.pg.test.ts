import { sendBytes } from '@internal/pg-test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, json, run, type Served, serve } from './serve-harness.js';
import { storageTargets, type Where } from './storage-targets.js';

// Input the database cannot take is refused as what it is, before the database, never as an
// outage (issue 55, items 2 and 3); one limit on an answer's content, in the API, its batch
// form and the CLI, named by the error (item 6). On the embedded default and on PostgreSQL.

const targets = await storageTargets();

const postBytes = (url: string, body: Buffer) => sendBytes(url, 'POST', body);

for (const target of targets) {
  describe.skipIf(target.skip)(
    `hostile input over HTTP (${target.name})`,
    { timeout: 300_000 },
    () => {
      let where: Where;
      let served: Served | undefined;
      const tokens: string[] = [];
      const cli = (args: string[]) => run([...args, '--json', ...where.args], where.env);
      const api = (path: string) => new URL(path, served?.url).toString();
      const answer = (token: string, body: unknown) =>
        call(api(`/api/pauses/${token}/answer`), json(body));
      const stillPending = async (token: string) =>
        expect((await call(api(`/api/pauses/${token}`))).status).toBe(200);

      beforeAll(async () => {
        where = await target.setUp();
        for (const c of ['in-1', 'in-2']) {
          const started = await cli(['exec', 'Plan a trip', '--conversation', c]);
          expect(started.code, started.stderr).toBe(0);
          tokens.push(started.events.find((e) => e.type === 'run-waiting')?.token as string);
        }
        served = await serve([...where.args, '--no-wake'], where.env);
      });
      afterAll(async () => {
        await served?.stop();
        await where?.drop();
      });

      it('a NUL or a lone surrogate in an answer is 400 naming it, never 503; nothing changes', async () => {
        const [token = ''] = tokens;
        for (const [content, holds] of [
          ['a\u0000b', 'a NUL character (U+0000)'],
          ['\ud800x', 'a lone surrogate (U+D800, half of a UTF-16 pair)'],
          ['x\udfff', 'a lone surrogate (U+DFFF, half of a UTF-16 pair)'],
        ]) {
          const refused = await answer(token, { action: 'accept', content });
          expect(refused.status, JSON.stringify(refused.body)).toBe(400);
          expect(refused.body.error.code).toBe('invalid_request');
          expect(refused.body.error.message).toBe(
            `"content" holds ${holds}, which cannot be stored: remove it and send again; nothing was changed`,
          );
          const batch = await call(
            api('/api/pauses/answer-batch'),
            json({ answers: [{ token, action: 'accept', content }] }),
          );
          expect(batch.status, JSON.stringify(batch.body)).toBe(400);
          expect(batch.body.error.code).toBe('invalid_answer');
          expect(batch.body.error.message).toContain(`the content holds ${holds}`);
        }
        await stillPending(token);
      });

      it('a NUL in a token is 404 in the path and in answer-batch; in a query, 400', async () => {
        const [token = ''] = tokens;
        for (const path of ['/api/pauses/abc%00def', '/api/pauses/abc%00def/context']) {
          const missing = await call(api(path));
          expect(missing.status, path).toBe(404);
          expect(missing.body.error).toMatchObject({
            code: 'pause_not_found',
            tokens: ['abc\u0000def'],
          });
        }
        const answered = await answer('abc%00def', { action: 'accept', content: 'x' });
        expect(answered.status).toBe(404);
        expect(answered.body.error.code).toBe('pause_not_found');
        const batch = await call(
          api('/api/pauses/answer-batch'),
          json({
            answers: [
              { token, action: 'accept', content: 'Lisbon' },
              { token: 'abc\u0000def', action: 'accept', content: 'x' },
            ],
          }),
        );
        expect(batch.status, JSON.stringify(batch.body)).toBe(404);
        expect(batch.body.error).toMatchObject({
          code: 'pause_not_found',
          tokens: ['abc\u0000def'],
        });
        expect(batch.body.error.message).toContain('batch not applied, nothing was answered');
        for (const query of ['/api/audit?conversation=a%00b', '/api/notifications?before=a%00b']) {
          const refused = await call(api(query));
          expect(refused.status, query).toBe(400);
          expect(refused.body.error.code).toBe('invalid_request');
          expect(refused.body.error.message).toContain('holds a NUL character (U+0000)');
        }
        await stillPending(token);
      });

      it('invalid UTF-8 in a body (FF FE C0 80 in content) is 400, never stored as U+FFFD', async () => {
        const [token = ''] = tokens;
        const body = Buffer.concat([
          Buffer.from('{"action":"accept","content":"a'),
          Buffer.from([0xff, 0xfe, 0xc0, 0x80]),
          Buffer.from('b"}'),
        ]);
        const refused = await postBytes(api(`/api/pauses/${token}/answer`), body);
        expect(refused.status).toBe(400);
        expect(JSON.parse(refused.body)).toEqual({
          error: {
            code: 'invalid_json',
            message: 'the body is not valid UTF-8: send JSON encoded as UTF-8',
          },
        });
        await stillPending(token);
      });

      it('one content limit, 16,384 characters, in the API, its batch form and the CLI, named by each', async () => {
        const [token = ''] = tokens;
        const over = 'x'.repeat(16_385);
        const says = 'over the limit of 16,384 characters for an answer';
        const one = await answer(token, { action: 'accept', content: over });
        expect(one.status).toBe(400);
        expect(one.body.error.code).toBe('invalid_answer');
        expect(one.body.error.message).toContain(`the content is 16,385 characters, ${says}`);
        const batch = await call(
          api('/api/pauses/answer-batch'),
          json({ answers: [{ token, action: 'accept', content: over }] }),
        );
        expect(batch.status).toBe(400);
        expect(batch.body.error.message).toContain(says);
        const byCli = await run(['answer', token, '--accept', over, ...where.args], where.env);
        expect(byCli.code).toBe(2);
        expect(byCli.stderr).toContain(`the answer to ${token} is 16,385 characters, ${says}`);
        await stillPending(token);
        // At the limit it is taken, counted in characters: 16,384 emoji are 32,768 UTF-16
        // units and 65,536 bytes.
        const emoji = '😀'.repeat(16_384);
        const taken = await answer(token, { action: 'accept', content: emoji });
        expect(taken.status, JSON.stringify(taken.body).slice(0, 300)).toBe(200);
      });

      it('a body over 256 KiB is 413 naming the limit', async () => {
        const big = await call(
          api(`/api/pauses/${tokens[1]}/answer`),
          json({ action: 'accept', content: 'x'.repeat(300 * 1024) }),
        );
        expect(big.status).toBe(413);
        expect(big.body.error).toEqual({
          code: 'payload_too_large',
          message: 'request bodies are limited to 262,144 bytes (256 KiB)',
          limit: 262_144,
        });
        await stillPending(tokens[1] as string);
      });
    },
  );
}
