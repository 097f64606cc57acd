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

// The receiver on 127.0.0.1 is the one the runner's webhook tests use too.
export {
  type HttpReceiver as Receiver,
  type ReceivedRequest as Received,
  startHttpReceiver as startReceiver,
} from '@internal/pg-test';

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
