import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Deliverer, sendersFromEnv } from 'runner/dist/notify/deliver.js';
import { knob } from '../knobs.js';
import { startRunner } from '../proc.js';
import type { Tally } from '../report.js';
import { exec, openRunnerStorage } from '../runner.js';
import { createDatabase } from '../server.js';

const QUESTIONS = knob('RELIABILITY_NOTIFY_QUESTIONS', 1000, 200);
/** The share of requests the receiver refuses (500). */
const FAILING = 0.2;
/** Deliveries a "crashed" deliverer makes without recording them: each must come again. */
const CRASHED = 50;

/**
 * The outbox under a receiver that fails 20 % of requests: 1,000 questions, each with its
 * `question.created` notification, delivered by a deliverer of the runner; before it, one
 * that "crashes" after sending 50 of them (it claimed and sent, and recorded nothing), so
 * those come again after their lease. Every question must reach the receiver (no loss);
 * duplicates by `webhook-id` are counted (the crashed ones, and no others); none may be
 * dead-lettered at 20 % with 8 attempts (a 0.2⁸ chance each).
 */
export async function notifyScenario(tally: Tally): Promise<void> {
  const accepted = new Map<string, number>();
  let requests = 0;
  let refused = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      if (Math.random() < FAILING) {
        refused++;
        res.writeHead(500).end();
        return;
      }
      const id = String(req.headers['webhook-id']);
      accepted.set(id, (accepted.get(id) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  process.env.RUNNER_WEBHOOK_URL = url;
  const db = await createDatabase();
  const storage = await openRunnerStorage(db.url);
  try {
    for (let i = 0; i < QUESTIONS; i++) await exec(storage, `notify-${i}`);
    const outbox = storage.notifications();
    const senders = sendersFromEnv();
    // The crash: claimed with a short lease and sent, never recorded.
    const crashed = await outbox.claimDue(CRASHED, 300);
    for (const n of crashed) await senders.webhook?.(n, storage).catch(() => {});
    const deliverer = new Deliverer(() => storage, {
      senders,
      maxAttempts: 8,
      baseMs: 10,
      batch: 32,
    });
    let retried = 0;
    const started = performance.now();
    for (;;) {
      await deliverer.deliverDue();
      const pending = (await outbox.list({ status: 'pending', limit: 1 })).length;
      if (pending === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    const all = await outbox.list({ limit: QUESTIONS * 2 });
    const delivered = all.filter((n) => n.status === 'delivered');
    const dead = all.filter((n) => n.status === 'failed');
    for (const n of all) retried += Math.max(0, n.attempts - 1);
    const duplicates = [...accepted.values()].filter((count) => count > 1).length;
    tally.cases = all.length;
    tally.faults = refused + crashed.length;
    tally.check(
      all.length === QUESTIONS,
      () => `${all.length} notifications for ${QUESTIONS} questions`,
    );
    for (const n of all) {
      if (n.status === 'delivered' && !accepted.has(n.eventId)) {
        tally.loss(`notification ${n.id} is delivered, the receiver never accepted ${n.eventId}`);
      }
    }
    const missing = QUESTIONS - accepted.size - dead.length;
    if (missing > 0) tally.loss(`${missing} question(s) never reached the receiver`);
    tally.check(dead.length === 0, () => `${dead.length} dead-lettered at a 20 % failure rate`);
    tally.check(
      duplicates <= crashed.length,
      () => `${duplicates} duplicates at the receiver, more than the ${crashed.length} crashed`,
    );
    tally.note(
      `${QUESTIONS} questions, receiver refusing ${Math.round(FAILING * 100)} %: ${delivered.length} delivered, ${requests} requests (${refused} refused), ${retried} retries, ${dead.length} dead-lettered, ${duplicates} duplicates at the receiver by webhook-id (${crashed.length} sent by a deliverer that crashed before recording), ${seconds.toFixed(1)} s of delivery`,
    );
  } finally {
    delete process.env.RUNNER_WEBHOOK_URL;
    await storage.close();
    await db.drop();
    server.close();
  }
}

/**
 * `runner wake` SIGKILLed while a delivery is in flight (the receiver holds the request):
 * after another wake starts, the claim's lease (a minute) runs out and the notification is
 * delivered again, with the same `webhook-id`, never lost.
 */
export async function notifyKillScenario(tally: Tally): Promise<void> {
  const seen: string[] = [];
  const held: Array<() => void> = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      seen.push(id);
      // The first request is held until the wake that sent it is gone.
      if (seen.length === 1) held.push(() => res.destroy());
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  process.env.RUNNER_WEBHOOK_URL = url;
  const db = await createDatabase();
  const storage = await openRunnerStorage(db.url);
  const env = { DATABASE_URL: db.url, RUNNER_WEBHOOK_URL: url };
  try {
    await exec(storage, 'notify-kill');
    const [queued] = await storage.notifications().list();
    const first = startRunner(['wake', '--json'], env);
    await until(() => seen.length === 1, 60_000);
    first.child.kill('SIGKILL');
    await first.done;
    for (const release of held) release();
    tally.faults++;
    const second = startRunner(['wake', '--json'], env);
    try {
      const delivered = await until(() => seen.length >= 2, 120_000);
      tally.cases++;
      if (!delivered) tally.loss(`notification ${queued?.id} never delivered after the kill`);
      // The receiver answered; the wake records the delivery just after (later under load).
      let [after] = await storage.notifications().list();
      for (let waited = 0; after?.status !== 'delivered' && waited < 30_000; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        [after] = await storage.notifications().list();
      }
      tally.check(
        after?.status === 'delivered' && seen.every((id) => id === queued?.eventId),
        () => `after the kill: ${after?.status}, ids ${seen.join(', ')}`,
      );
      tally.note(
        `wake SIGKILLed mid-delivery: delivered again by the next wake after the lease, ${seen.length} requests with one webhook-id`,
      );
    } finally {
      second.child.kill('SIGTERM');
      await second.done;
    }
  } finally {
    delete process.env.RUNNER_WEBHOOK_URL;
    await storage.close();
    await db.drop();
    server.close();
  }
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}
