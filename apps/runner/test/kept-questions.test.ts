import { describe, expect, it } from 'vitest';
import { type CliResult, dataDirs, runCli, runShell } from './run-cli.js';

// What a person typed or decided is never lost as a side effect: exec refuses to cancel an
// open question, purge keeps what an unfinished run needs, a second answer says who gave
// the first.

const dataDir = dataDirs();
const last = <T>(list: T[]): T => list[list.length - 1] as T;
const errorLines = (result: CliResult) => result.stderr.trimEnd().split('\n');

describe('runner keeps questions and answers (embedded default)', { timeout: 300_000 }, () => {
  it('exec on a conversation with an open question or an answered run is refused (exit 5) with how to replace it; --replace, as printed, starts over', async () => {
    const data = dataDir();
    const first = await runCli(['exec', 'Plan', '--conversation', 'q', '--data', data, '--json']);
    const token = last(first.events).token as string;

    const refused = await runCli(['exec', 'Plan again', '--conversation', 'q', '--data', data]);
    expect(refused.code).toBe(5);
    expect(errorLines(refused)).toHaveLength(1);
    expect(refused.stderr).toContain(
      `conversation q has an open question (token ${token}: "Where would you like to go?")`,
    );
    expect(refused.stderr).toContain(`answer ${token} --accept TEXT`);
    const replace = refused.stderr.split('start over with: ')[1]?.trim() ?? '';
    expect(replace).toMatch(
      /^node \S+cli\.js exec 'Plan again' --conversation q --replace --data /,
    );

    // The question is still open: it can be answered. Answered but not resumed, the run
    // holds the answer: still refused.
    const answered = await runCli(['answer', token, '--option', '2', '--data', data]);
    expect(answered.code, answered.stderr).toBe(0);
    const ready = await runCli([
      'exec',
      'Plan again',
      '--conversation',
      'q',
      '--data',
      data,
      '--json',
    ]);
    expect(ready.code).toBe(5);
    expect(JSON.parse(ready.stderr)).toMatchObject({
      type: 'error',
      failure: 'conflict',
      exitCode: 5,
      message: expect.stringContaining('answered and not resumed yet'),
    });

    const replaced = await runShell(replace, { cwd: process.cwd() });
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stdout).toContain('stopped 1 unfinished run of q first');
    expect(replaced.stdout).toContain('? Where would you like to go?');
  });
});
