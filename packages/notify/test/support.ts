import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type SqlTarget, sqlTargets } from '@internal/pg-test';
import { NotificationOutbox, type NotificationRecord } from '@x/askuser';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
import { migrate } from '../src/index.js';

/**
 * Registers `title` once per storage (PostgreSQL in a database of its own when a server is
 * there, PGlite), migrated by `@x/notify` (with `@x/askuser`'s outbox), its tables emptied
 * before each test.
 */
export async function describeOnEachStorage(
  title: string,
  body: (s: { target: SqlTarget; outbox: NotificationOutbox }) => void,
): Promise<void> {
  for (const spec of await sqlTargets()) {
    describe.skipIf(spec.skip)(`${title} on ${spec.kind}`, () => {
      const s = {} as { target: SqlTarget; outbox: NotificationOutbox };
      beforeAll(async () => {
        s.target = await spec.open();
        await migrate(s.target.db);
        s.outbox = new NotificationOutbox(s.target.db);
      });
      afterAll(() => s.target?.close());
      beforeEach(async () => {
        await s.target.db.execute(
          sql`truncate aura.notifications, x_notify.decision_links, x_notify.slack_messages`,
        );
      });
      body(s);
    });
  }
}

/** One request a {@link Receiver} took. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A real HTTP server on 127.0.0.1 that keeps each request and answers as told. */
export interface Receiver {
  url: string;
  requests: Received[];
  close(): Promise<void>;
}

/** Starts a {@link Receiver}; `answer` writes each response (the requests so far include this one). */
export async function startReceiver(
  answer: (res: ServerResponse, request: Received, requests: Received[]) => void,
): Promise<Receiver> {
  const requests: Received[] = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
    requests.push(request);
    answer(res, request, requests);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A `question.created` notification of question `token`, as the executive enqueues it. */
export function questionCreated(token: string, channel = 'webhook', extra: object = {}) {
  return {
    eventId: `evt_${token}`,
    kind: 'question.created',
    channel,
    payload: {
      type: 'question.created',
      timestamp: new Date().toISOString(),
      data: { token, conversationId: 'conv-1', question: `Deploy ${token}?`, ...extra },
    },
  };
}

/** The outbox row of `n` as a claim returns it, as event `kind` with more `data`. */
export function record(
  n: ReturnType<typeof questionCreated>,
  kind = n.kind,
  data = {},
): NotificationRecord {
  return {
    ...n,
    kind,
    payload: { ...n.payload, type: kind, data: { ...n.payload.data, ...data } },
    id: `${n.eventId}-${kind}`,
    status: 'pending',
    attempts: 1,
    nextAt: new Date(),
    lastError: null,
    createdAt: new Date(),
    deliveredAt: null,
  };
}
