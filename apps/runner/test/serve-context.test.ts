import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { AskUserStore } from '@x/askuser';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  dataDirs,
  exec,
  json,
  type Served,
  serve,
  until,
  workerPause,
} from './serve-harness.js';

const dataDir = dataDirs();

describe('runner serve: the context of a question (embedded, no wake)', () => {
  let server: Served;
  let token: string;
  const data = dataDir();

  beforeAll(async () => {
    token = await exec('c-ctx', { data });
    // Written straight into the data folder while no runner holds it.
    const client = new PGlite(path.join(data, 'pglite'));
    try {
      await new AskUserStore(drizzle({ client })).insert(workerPause);
    } finally {
      await client.close();
    }
    server = await serve(['--no-wake', '--data', data]);
  }, 300_000);
  afterAll(async () => {
    if (server) expect(await server.stop()).toBe(0);
  });

  const api = (p: string) => new URL(p, server.url).toString();

  it('GET /api/pauses/:token/context: goal, messages, the tool call that asked, the run', async () => {
    const { status, body } = await call(api(`/api/pauses/${token}/context`));
    expect(status).toBe(200);
    const { context } = body;
    expect(context).toMatchObject({
      token,
      conversationId: 'c-ctx',
      goal: 'Plan a trip',
      earlierMessages: 0,
      source: null,
      toolCall: {
        name: 'ask_user',
        input: {
          question: 'Where would you like to go?',
          options: ['Lisbon', 'Kyoto', 'Reykjavik'],
        },
      },
      run: { status: 'waiting', attempts: 0, finishedAt: null },
    });
    expect(context.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant']);
    expect(context.messages[1].text).toContain('Let me plan your trip.');
    expect(context.history.map((q: { token: string }) => q.token)).toEqual([token]);
    expect((await call(api('/api/pauses/no-such-token/context'))).status).toBe(404);
  });

  it("a worker's question names its worker and sub-task, in the list, the context and recent", async () => {
    const source = { worker: 'w2', task: 'Find flights to Kyoto' };
    const { body } = await call(api('/api/pauses'));
    const listed = body.pauses.find((p: { token: string }) => p.token === workerPause.token);
    expect(listed).toMatchObject({ proxiedFromChildId: 'w2', source });
    const direct = body.pauses.find((p: { token: string }) => p.token === token);
    expect(direct.source).toBeNull();
    const { body: ctx } = await call(api(`/api/pauses/${workerPause.token}/context`));
    expect(ctx.context).toMatchObject({
      conversationId: 'trip-team',
      source,
      run: null,
      goal: null,
    });
    const { body: recent } = await call(api('/api/recent'));
    expect(
      recent.recent.find((r: { token: string }) => r.token === workerPause.token),
    ).toMatchObject({ source });
  });

  it('serves /favicon.ico', async () => {
    const res = await fetch(api('/favicon.ico'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/x-icon');
    const bytes = new Uint8Array(await res.arrayBuffer());
    // An ICO file: reserved 0, type 1.
    expect([...bytes.slice(0, 4)]).toEqual([0, 0, 1, 0]);
  });
});

describe('runner serve: approve with changes (embedded, hosting the wake loop)', () => {
  it('the edited approval is the tool result the resumed turn reads', {
    timeout: 240_000,
  }, async () => {
    const data = dataDir();
    const first = await exec('c-changes', { data });
    const server = await serve(['--data', data]);
    try {
      const api = (p: string) => new URL(p, server.url).toString();
      const nextAfter = (answered: string) =>
        until(async () => {
          const { body } = await call(api('/api/pauses'));
          const next = body.pauses.find(
            (p: { conversationId: string; token: string }) =>
              p.conversationId === 'c-changes' && p.token !== answered,
          );
          return next?.token as string | undefined;
        }, 'the next question');
      expect(
        (
          await call(
            api(`/api/pauses/${first}/answer`),
            json({ action: 'accept', content: 'Kyoto' }),
          )
        ).status,
      ).toBe(200);
      const days = await nextAfter(first);
      expect(
        (await call(api(`/api/pauses/${days}/answer`), json({ action: 'accept', content: '5' })))
          .status,
      ).toBe(200);
      const approval = await nextAfter(days);

      // The approval's context shows the proposed action and its arguments.
      const { body: before } = await call(api(`/api/pauses/${approval}/context`));
      expect(before.context.toolCall).toEqual({
        id: expect.any(String),
        name: 'approve',
        input: {
          action: 'Book flights and a hotel in Kyoto for 5 days',
          details: 'Estimated cost: 1,240 EUR',
        },
      });
      expect(before.context.history.map((q: { token: string }) => q.token)).toEqual([
        first,
        days,
        approval,
      ]);

      const edited = 'approved with changes: Book flights and a hotel in Kyoto for 3 days';
      const res = await call(
        api(`/api/pauses/${approval}/answer`),
        json({ action: 'accept', content: edited }),
      );
      expect(res.status).toBe(200);
      const after = await until(async () => {
        const { body } = await call(api(`/api/pauses/${approval}/context`));
        return body.context.run?.status === 'completed' && body.context;
      }, 'the run to complete');
      // The run's recorded transcript: the resumed model call got the edited content.
      const texts: string[] = after.messages.map((m: { text: string }) => m.text);
      expect(texts).toContain(`[result: ${edited}]`);
      expect(texts.at(-1)).toContain('Booked: Kyoto, 5 days.');
      expect(after.run.finishedAt).toEqual(expect.any(String));
      expect(after.history.at(-1)).toMatchObject({
        token: approval,
        answer: { action: 'accept', content: edited },
        status: 'resumed',
        outcome: 'completed',
      });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
