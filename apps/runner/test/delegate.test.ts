import { rmSync } from 'node:fs';
import { afterAll, describe, it } from 'vitest';
import { type Cli, cancelled, inOneBatch, oneAtATime } from './delegate-flow.js';
import { runCli, tempDataDir } from './run-cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The CLI on a data folder of its own. */
function embedded(): { cli: Cli; data: string } {
  const data = tempDataDir();
  dirs.push(data);
  return { cli: (args) => runCli([...args, '--data', data]), data };
}

describe('delegate: worker sub-agents on the embedded default', { timeout: 300_000 }, () => {
  it('exec → answer w2 → wake → answer w1 → wake: each worker resumed once, the parent once', async () => {
    await oneAtATime(embedded().cli, 'team-1');
  });

  it('both worker questions answered in one batch: one wake finishes the delegate call', async () => {
    const { cli, data } = embedded();
    await inOneBatch(cli, 'team-2', data);
  });

  it('a cancelled worker question cancels the delegated run', async () => {
    await cancelled(embedded().cli, 'team-3');
  });
});
