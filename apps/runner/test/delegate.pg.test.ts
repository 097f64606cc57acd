import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, serverForTests, type TestDatabase } from '@internal/pg-test';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type Cli, cancelled, inOneBatch, oneAtATime } from './delegate-flow.js';
import { runCli } from './run-cli.js';

const server = await serverForTests();

describe.skipIf(!server)('delegate: worker sub-agents on PostgreSQL', { timeout: 300_000 }, () => {
  let database: TestDatabase;
  let cli: Cli;
  const scratch = mkdtempSync(path.join(tmpdir(), 'runner-delegate-'));

  beforeAll(async () => {
    database = await createTestDatabase(server);
    cli = (args) => runCli(args, { env: { DATABASE_URL: database.url } });
    await cli(['migrate']);
  });
  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await database?.drop();
  });

  it('exec → answer w2 → wake → answer w1 → wake: each worker resumed once, the parent once', async () => {
    await oneAtATime(cli, 'team-1');
  });

  it('both worker questions answered in one batch: one wake finishes the delegate call', async () => {
    await inOneBatch(cli, 'team-2', scratch);
  });

  it('a cancelled worker question cancels the delegated run', async () => {
    await cancelled(cli, 'team-3');
  });
});
