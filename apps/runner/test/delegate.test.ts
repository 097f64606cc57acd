import { describe, expect, it } from 'vitest';
import { type Cli, cancelled, inOneBatch, oneAtATime } from './delegate-flow.js';
import { dataDirs, finished, sharedStorage, startCli, waitForOutput } from './run-cli.js';

const dataDir = dataDirs();
// One storage open across the commands of a folder.
const shared = sharedStorage();
const runShared = shared.run;

/** The CLI on a data folder of its own. */
function embedded(): { cli: Cli; data: string } {
  const data = dataDir();
  return { cli: (args) => runShared([...args, '--data', data]), data };
}

describe('delegate: worker sub-agents on the embedded default', { timeout: 300_000 }, () => {
  it('exec → answer w2 → wake → answer w1 → wake: each worker resumed once, the parent once', async () => {
    await oneAtATime(embedded().cli, 'team-1');
  });

  it('both worker questions answered in one batch: one wake finishes the delegate call', async () => {
    const { cli, data } = embedded();
    await inOneBatch(cli, 'team-2', data);
  });

  it('chat asks each worker question at the prompt, labelled with its worker, and completes once', async () => {
    const { data } = embedded();
    const chat = await runShared(
      ['chat', '--session', 'team-chat', '--model', 'scripted:team', '--data', data],
      { input: 'Plan a Lisbon trip\n3\nmorning\n/quit\n' },
    );
    expect(chat.code, chat.stderr).toBe(0);
    const hotel = chat.stdout.indexOf(
      '[worker w1 of conversation team-chat (via delegate): Choose the hotel for the Lisbon trip]\n? Which hotel budget per night?',
    );
    const flight = chat.stdout.indexOf(
      '[worker w2 of conversation team-chat (via delegate): Choose the flight to Lisbon]\n? Morning or evening flight?',
    );
    expect(hotel).toBeGreaterThan(-1);
    expect(flight).toBeGreaterThan(hotel);
    const report = chat.stdout.slice(chat.stdout.indexOf('Your Lisbon trip:'));
    expect(report).toContain(
      'w1 (Choose the hotel for the Lisbon trip): Hotel: a place in Alfama, over 200 EUR a night.',
    );
    expect(report).toContain('w2 (Choose the flight to Lisbon): Flight: the morning flight.');
    expect(report.split('w3 (').length - 1).toBe(1);
    expect(chat.stdout.split('? Which hotel budget per night?').length - 1).toBe(1);
  });

  it('chat killed after one of two worker answers: --resume asks only the other, and completes once', async () => {
    const { data } = embedded();
    const args = ['chat', '--session', 'team-crash', '--model', 'scripted:team', '--data', data];
    const first = startCli(args);
    first.stdin?.write('Plan a Lisbon trip\n');
    await waitForOutput(first, '? Which hotel budget per night?');
    first.stdin?.write('3\n');
    await waitForOutput(first, '? Morning or evening flight?');
    // The answer to w1 is checkpointed before w2's question is asked.
    first.kill('SIGKILL');
    await finished(first);

    const second = await runShared([...args, '--resume'], { input: 'morning\n/quit\n' });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).not.toContain('? Which hotel budget per night?');
    expect(second.stdout.split('? Morning or evening flight?').length - 1).toBe(1);
    const report = second.stdout.slice(second.stdout.indexOf('Your Lisbon trip:'));
    expect(report).toContain('Hotel: a place in Alfama, over 200 EUR a night.');
    expect(report).toContain('Flight: the morning flight.');
  });

  it('a cancelled worker question cancels the delegated run', async () => {
    await cancelled(embedded().cli, 'team-3');
  });
});
