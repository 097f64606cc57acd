import { describe, expect, it } from 'vitest';
import { dataDirs, finished, sharedStorage, startCli, waitForOutput } from './run-cli.js';

const dataDir = dataDirs();
// A test's commands share one open storage: PGlite opens once per data folder, not per command.
const shared = sharedStorage();

const count = (text: string, part: string) => text.split(part).length - 1;

describe('runner chat (interactive)', { timeout: 300_000 }, () => {
  it('asks at the prompt and completes the turn with the answers typed on stdin', async () => {
    const data = dataDir();
    const chat = await shared.run(['chat', '--session', 'one', '--data', data], {
      input: 'Plan me a trip\n2\n5\nyes\n/quit\n',
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain('? Where would you like to go?');
    expect(chat.stdout).toContain('1) Lisbon   2) Kyoto   3) Reykjavik');
    expect(chat.stdout).toContain('? How many days in Kyoto?');
    expect(chat.stdout).toContain('Approve: Book flights and a hotel in Kyoto for 5 days?');
    expect(chat.stdout).toContain('Booked: Kyoto, 5 days.');

    // The session was checkpointed: it can be resumed, and a new chat may not reuse its id.
    const resumed = await shared.run(['chat', '--session', 'one', '--resume', '--data', data], {
      input: '/quit\n',
    });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toMatch(/resumed session one \(\d+ messages\)/);
    const reused = await shared.run(['chat', '--session', 'one', '--data', data], {
      input: '/quit\n',
    });
    expect(reused.code).toBe(2);
  });

  it('killed while waiting for an answer, --resume asks the same question again and completes once', async () => {
    const data = dataDir();
    const first = startCli(['chat', '--session', 'crash', '--data', data]);
    first.stdin?.write('Plan me a trip\n');
    await waitForOutput(first, '? Where would you like to go?');
    first.kill('SIGKILL');
    await finished(first);

    const second = await shared.run(['chat', '--session', 'crash', '--resume', '--data', data], {
      input: '1\n4\nyes\n/quit\n',
    });
    expect(second.code, second.stderr).toBe(0);
    expect(count(second.stdout, '? Where would you like to go?')).toBe(1);
    expect(count(second.stdout, 'Booked: Lisbon, 4 days.')).toBe(1);

    // Answered and resolved: a further resume finds no open question.
    const third = await shared.run(['chat', '--session', 'crash', '--resume', '--data', data], {
      input: '/quit\n',
    });
    expect(third.stdout).not.toContain('? Where would you like to go?');
  });

  it('decline is passed to the model and cancel ends the turn without an answer', async () => {
    const data = dataDir();
    const chat = await shared.run(['chat', '--session', 'd', '--data', data], {
      input: 'Plan\n/decline not sure yet\nPlan again\n/cancel\n/quit\n',
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain('Understood, you declined ("not sure yet")');
    expect(chat.stdout).not.toContain('good choice');
    expect(chat.stdout).toContain('cancelled: the turn ends without an answer');
  });
});
