import { runTurn, type SuspendedTurn } from '@x/executive';
import { userMessage } from '@x/wire';
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import { demoTools, SYSTEM_PROMPT } from '../src/demo/tools.js';
import { answer, startRun, stopConversation } from '../src/executive/index.js';
import { suspend } from '../src/executive/suspend.js';
import { modelFromId } from '../src/model/index.js';
import { Deliverer, deliveryFromEnv } from '../src/notify/deliver.js';
import type { Storage } from '../src/storage/index.js';
import type { NotificationRecord } from '../src/storage/notifications.js';
import type { WebhookReceiver } from './webhook-receiver.js';

const quiet = { event: () => {} };

/** Polls `check` until it holds (at most a minute). */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs a deliverer (short backoff) until `done` holds of the outbox, then stops it. */
async function deliverUntil(
  storage: Storage,
  maxAttempts: number,
  done: (all: NotificationRecord[]) => boolean,
): Promise<void> {
  const deliverer = new Deliverer(() => storage, { ...deliveryFromEnv(), baseMs: 5, maxAttempts });
  let stop = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const loop = deliverer.run(stopped, 50, (error) => {
    throw error;
  });
  await until(async () => done(await storage.notifications().list()));
  stop();
  await loop;
}

/**
 * The outbox's contract on `storage`, with RUNNER_WEBHOOK_URL at `receiver` and
 * RUNNER_WEBHOOK_SECRET `secrets` (new, old) set: a rolled-back question sends nothing, a
 * saved one exactly its notification; a receiver that fails three times gets four requests
 * with one webhook-id, each signed under both secrets; one that always fails ends failed
 * after the attempts, and retry makes it due again. Returns the failed notification's id.
 */
export async function outboxFlow(
  storage: Storage,
  receiver: WebhookReceiver,
  secrets: { current: string; old: string },
): Promise<string> {
  const model = modelFromId('scripted:trip');
  const turn = await runTurn(model, [userMessage('Plan me a trip')], quiet, {
    system: SYSTEM_PROMPT,
    tools: demoTools,
  });
  expect(turn.status).toBe('suspended');
  const ids = { runId: 'run-rolled-back', conversationId: 'rolled-back' };
  await expect(
    storage.transaction(async (tx) => {
      await suspend(tx, storage, ids, model, turn as SuspendedTurn, 'q-rolled-back');
      // Something after the question fails: its transaction rolls back, notifications too.
      throw new Error('rolled back');
    }),
  ).rejects.toThrow('rolled back');
  expect(await storage.notifications().list()).toEqual([]);

  const saved = await startRun(storage, model, 'Plan me a trip', 'saved', quiet);
  if (saved.status !== 'waiting') throw new Error(`not waiting: ${saved.status}`);
  const [created, ...more] = await storage.notifications().list();
  expect(more).toEqual([]);
  expect(created).toMatchObject({
    kind: 'question.created',
    channel: 'webhook',
    status: 'pending',
    attempts: 0,
    payload: {
      type: 'question.created',
      data: { token: saved.token, conversationId: 'saved', tool: 'ask_user' },
    },
  });

  // Three failures, then the receiver takes it: four requests, one event id.
  receiver.answer = (_id, n) => (n < 3 ? 500 : 204);
  await deliverUntil(storage, 8, (all) => all.every((n) => n.status === 'delivered'));
  const requests = receiver.received.splice(0);
  expect(requests.map((r) => r.status)).toEqual([500, 500, 500, 204]);
  expect(new Set(requests.map((r) => r.id))).toEqual(new Set([created?.eventId]));
  const [delivered] = await storage.notifications().list();
  expect(delivered).toMatchObject({ status: 'delivered', attempts: 4, lastError: null });
  // Signed under both secrets during a rotation: a receiver that knows either verifies.
  for (const { body, headers } of requests) {
    expect(String(headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [secrets.current, secrets.old]) {
      expect(new Webhook(secret).verify(body, headers as Record<string, string>)).toMatchObject({
        type: 'question.created',
      });
    }
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`).verify(
        body,
        headers as Record<string, string>,
      ),
    ).toThrow();
  }

  // The answer is an event too; a receiver that always fails: the dead letter after 3 attempts.
  await answer(storage, saved.token, { action: 'accept', content: 'Lisbon' }, { channel: 'cli' });
  receiver.answer = () => 503;
  await deliverUntil(storage, 3, (all) => all.some((n) => n.status === 'failed'));
  const failed = (await storage.notifications().list({ status: 'failed' }))[0];
  expect(failed).toMatchObject({
    kind: 'question.answered',
    attempts: 3,
    payload: { data: { token: saved.token, answer: { action: 'accept' }, channel: 'cli' } },
  });
  expect(failed?.lastError).toMatch(/answered 503: receiver says no/);
  const dead = receiver.received.splice(0);
  expect(dead.map((r) => r.id)).toEqual([failed?.eventId, failed?.eventId, failed?.eventId]);

  // Stopping a conversation closes its questions: each is a question.cancelled.
  const stopped = await startRun(storage, model, 'Plan me a trip', 'stopped', quiet);
  await stopConversation(storage, 'stopped');
  const kinds = (await storage.notifications().list({ status: 'pending' })).map((n) => n.kind);
  expect(kinds.sort()).toEqual(['question.cancelled', 'question.created']);
  const [cancelled] = await storage.notifications().list({ status: 'pending', limit: 1 });
  expect(cancelled?.payload).toMatchObject({
    data: { token: stopped.status === 'waiting' ? stopped.token : '', reason: 'stopped' },
  });
  receiver.answer = () => 204;
  await deliverUntil(storage, 8, (all) => all.every((n) => n.status !== 'pending'));
  receiver.received.length = 0;
  return failed?.id ?? '';
}
