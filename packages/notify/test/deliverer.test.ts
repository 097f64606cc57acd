import { randomBytes } from 'node:crypto';
import { NotificationOutbox } from '@x/askuser';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Deliverer, type DeliveryEvent, NotifyError, webhookSender } from '../src/index.js';
import { describeOnEachStorage, questionCreated, type Receiver, startReceiver } from './support.js';

const secret = randomBytes(24);

await describeOnEachStorage('the deliverer', (s) => {
  let receiver: Receiver;
  // The receiver fails the first request of each event with a 500, then takes it.
  beforeEach(async () => {
    receiver = await startReceiver((res, request, requests) => {
      const id = request.headers['webhook-id'];
      const seen = requests.filter((r) => r.headers['webhook-id'] === id).length;
      res.writeHead(seen === 1 ? 500 : 204).end(seen === 1 ? 'busy, try later' : undefined);
    });
  });
  afterEach(() => receiver.close());

  const deliverer = (events: DeliveryEvent[] = [], maxAttempts = 5) =>
    new Deliverer({
      outbox: s.outbox,
      senders: { webhook: webhookSender({ url: receiver.url, secrets: [secret] }) },
      baseMs: 200,
      maxAttempts,
      onDelivery: (e) => events.push(e),
    });

  /** Delivers what is due until nothing is pending (the backoffs waited out), for 5 s at most. */
  async function deliverUntilDone(d: Deliverer): Promise<void> {
    for (let i = 0; i < 100 && (await s.outbox.list({ status: 'pending' })).length > 0; i++) {
      await d.deliverDue();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('retries after a 500 with a backoff, then delivers with the same signed webhook-id', async () => {
    await s.outbox.enqueue([questionCreated('q1')]);
    const events: DeliveryEvent[] = [];
    const before = Date.now();
    expect(await deliverer(events).deliverDue()).toBe(1);
    expect(events[0]).toMatchObject({ type: 'notification-retrying', attempt: 1 });
    expect(events[0]?.type === 'notification-retrying' && events[0].error).toBe(
      `webhook ${receiver.url} answered 500: busy, try later`,
    );
    const [waiting] = await s.outbox.list();
    expect(waiting).toMatchObject({ status: 'pending', attempts: 1 });
    // Not due again before half the base backoff (jitter covers the upper half); whether a
    // claim made now finds it depends on the machine's speed, so the due time is what is checked.
    expect(waiting?.nextAt.getTime()).toBeGreaterThanOrEqual(before + 100 - 50);

    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await deliverer(events).deliverDue()).toBe(1);
    expect(events[1]).toMatchObject({ type: 'notification-delivered', attempt: 2 });
    expect(await s.outbox.list()).toMatchObject([{ status: 'delivered', lastError: null }]);

    const ids = receiver.requests.map((r) => r.headers['webhook-id']);
    expect(ids).toEqual(['evt_q1', 'evt_q1']);
    const verifier = new Webhook(secret.toString('base64'));
    for (const r of receiver.requests) {
      expect(verifier.verify(r.body, r.headers as Record<string, string>)).toMatchObject({
        type: 'question.created',
        data: { token: 'q1' },
      });
    }
  });

  it('redelivers a claim whose deliverer died once its lease ran out: at least once, same id', async () => {
    await s.outbox.enqueue([questionCreated('q2')]);
    // A deliverer that claimed and died before recording anything.
    expect(await new NotificationOutbox(s.target.db).claimDue(16, 100)).toHaveLength(1);
    expect(await deliverer().deliverDue()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await deliverUntilDone(deliverer());
    const [n] = await s.outbox.list();
    expect(n).toMatchObject({ status: 'delivered', attempts: 3 });
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual(['evt_q2', 'evt_q2']);

    // Sent again by hand (`retry`): the receiver sees the same id once more, to drop.
    expect(await s.outbox.retry(n?.id ?? '')).toBeDefined();
    await deliverUntilDone(deliverer());
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([
      'evt_q2',
      'evt_q2',
      'evt_q2',
    ]);
  });

  it('fails a notification after maxAttempts, and one of a channel with no sender', async () => {
    await s.outbox.enqueue([questionCreated('q3'), questionCreated('q4', 'pager')]);
    const events: DeliveryEvent[] = [];
    await deliverer(events, 1).deliverDue();
    const failed = await s.outbox.list({ status: 'failed' });
    expect(failed.map((n) => [n.channel, n.lastError]).sort()).toEqual([
      ['pager', 'no sender is given for the channel pager'],
      ['webhook', `webhook ${receiver.url} answered 500: busy, try later`],
    ]);
    expect(events.map((e) => e.type)).toEqual(['notification-failed', 'notification-failed']);
  });

  it('runs until its signal aborts, delivering what is poked', async () => {
    const stop = new AbortController();
    const d = new Deliverer({
      outbox: () => s.outbox,
      senders: { webhook: webhookSender({ url: receiver.url, secrets: [] }) },
      baseMs: 10,
      pollMs: 60_000,
    });
    const loop = d.run(stop.signal);
    await s.outbox.enqueue([questionCreated('q5')]);
    d.poke();
    for (let i = 0; i < 100 && (await s.outbox.list({ status: 'delivered' })).length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (i % 5 === 0) d.poke();
    }
    expect(await s.outbox.list()).toMatchObject([{ status: 'delivered', attempts: 2 }]);
    stop.abort();
    await loop;
    await d.close();
  });

  it('stops its loop on close(), with no signal', async () => {
    const d = new Deliverer({ outbox: s.outbox, senders: {}, pollMs: 60_000 });
    const loop = d.run();
    await d.close();
    await expect(loop).resolves.toBeUndefined();
  });
});

it('refuses options out of range with invalid_argument', () => {
  const outbox = {} as NotificationOutbox;
  const made = () => new Deliverer({ outbox, senders: {}, maxAttempts: 0 });
  expect(made).toThrow(NotifyError);
  try {
    made();
  } catch (error) {
    expect(NotifyError.hasCode(error, 'invalid_argument')).toBe(true);
  }
});
