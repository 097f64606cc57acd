import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, serverForTests, type TestDatabase } from '@internal/pg-test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answeredDuringResume,
  type Cli,
  cancelled,
  inOneBatch,
  oneAtATime,
} from './delegate-flow.js';
import { runInProcess, startCli } from './run-cli.js';

const server = await serverForTests();

describe.skipIf(!server)('delegate: worker sub-agents on PostgreSQL', { timeout: 300_000 }, () => {
  let database: TestDatabase;
  let cli: Cli;
  const scratch = mkdtempSync(path.join(tmpdir(), 'runner-delegate-'));

  beforeAll(async () => {
    database = await createTestDatabase(server);
    cli = (args) => runInProcess(args, { env: { DATABASE_URL: database.url } });
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

  it('an answer that lands while the run resumes another worker is not lost', async () => {
    const wake = (extra: Record<string, string>) =>
      startCli(['wake', '--json', '--model', 'scripted:team'], {
        env: { DATABASE_URL: database.url, RUNNER_WAKE_POLL_MS: '200', ...extra },
      });
    await answeredDuringResume(cli, wake, 'team-4');
  });

  it('chat asks each worker question at the prompt, labelled with its worker, and completes once', async () => {
    const chat = await runInProcess(
      ['chat', '--session', 'team-chat', '--model', 'scripted:team'],
      {
        env: { DATABASE_URL: database.url },
        input: 'Plan a Lisbon trip\n1\nevening\n/quit\n',
      },
    );
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain(
      '[worker w2 of conversation team-chat (via delegate): Choose the flight to Lisbon]\n? Morning or evening flight?',
    );
    const report = chat.stdout.slice(chat.stdout.indexOf('Your Lisbon trip:'));
    expect(report).toContain('Hotel: a place in Alfama, under 100 EUR a night.');
    expect(report).toContain('Flight: the evening flight.');
  });

  it('a cancelled worker question cancels the delegated run', async () => {
    await cancelled(cli, 'team-3');
  });
});
