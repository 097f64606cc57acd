import { createTestDatabase, serverForTests, type TestDatabase } from '@internal/pg-test';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { openStorage } from '../src/storage/index.js';
import { outboxFlow } from './notifications-flow.js';
import { newSecret, startReceiver, type WebhookReceiver } from './webhook-receiver.js';

// The notification outbox on PostgreSQL: the same contract as on the embedded default.

const server = await serverForTests();

describe.skipIf(!server)('notifications (PostgreSQL)', { timeout: 300_000 }, () => {
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  const secrets = { current: newSecret(), old: newSecret() };

  beforeAll(async () => {
    database = await createTestDatabase(server);
    receiver = await startReceiver();
    process.env.RUNNER_WEBHOOK_URL = receiver.url;
    process.env.RUNNER_WEBHOOK_SECRET = `${secrets.current} ${secrets.old}`;
  });
  afterAll(async () => {
    await receiver?.close();
    await database?.drop();
  });

  it('outbox in the transaction, retries with one webhook-id, then the dead letter', async () => {
    const storage = await openStorage({
      dataDir: '.',
      databaseUrl: database.url,
      command: 'test',
      log: () => {},
    });
    await outboxFlow(storage, receiver, secrets).finally(() => storage.close());
  });
});
