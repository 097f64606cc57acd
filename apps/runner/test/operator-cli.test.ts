import { writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type CliResult,
  copyDataTemplate,
  dataDirs,
  finished,
  runShell,
  sharedStorage,
  startCli,
  waitForOutput,
} from './run-cli.js';

// An operator's day through the real CLI: every hint runs as printed, every question shows
// its options, every failure is one line with the documented exit code.

const dataDir = dataDirs();
// One storage open across the commands of a folder; closed before a process opens the folder.
const shared = sharedStorage();
const cli = shared.run;
/** An empty folder (no database yet), removed after the file. */
const scratch = () => dataDir({ empty: true });

const last = <T>(list: T[]): T => list[list.length - 1] as T;
const errorLines = (result: CliResult) => result.stderr.trimEnd().split('\n');

/** The command a hint line printed after `label:`, e.g. `answer: <command>  (or ...)`. */
function hinted(stdout: string, label: string): string {
  const line = stdout.split('\n').find((l) => l.trimStart().startsWith(`${label}:`));
  if (!line) throw new Error(`no "${label}:" hint in:\n${stdout}`);
  return (
    line
      .slice(line.indexOf(':') + 1)
      .split('  (or ')[0]
      ?.trim() ?? ''
  );
}

describe('runner for operators (embedded default)', { timeout: 300_000 }, () => {
  it('an unusable data folder is one line and exit 4, never a hang', async () => {
    const folder = scratch();
    const file = path.join(folder, 'a-file');
    writeFileSync(file, '');
    const cases: Array<[string, string]> = [
      ['/proc/nope', 'no folder can be created at /proc/nope'],
      [file, `${file} is a file, not a folder`],
      [path.join(file, 'sub'), 'is a file, not a folder'],
    ];
    for (const [data, reason] of cases) {
      const result = await cli(['migrate', '--data', data]);
      expect(result.code, data).toBe(4);
      expect(errorLines(result), data).toHaveLength(1);
      expect(result.stderr.startsWith(`error: cannot use the data folder ${data}: `)).toBe(true);
      expect(result.stderr).toContain(reason);
    }
  });

  it('bad settings and arguments are one clean line with exit 2; with --json one JSON object', async () => {
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['runs'], { DATABASE_URL: 'not-a-url' }, 'DATABASE_URL is not a URL'],
      [['runs'], { DATABASE_URL: 'mysql://me:secret@db.example/x' }, 'is not a postgres URL'],
      [['exec', 'Plan', '--model', 'scripted:nope'], {}, 'unknown scenario "nope"'],
      [['chat', '--session', '../evil'], {}, '--session "../evil" cannot name a session'],
      [
        ['paused-states', 'list', '--limit', '-5'],
        {},
        '--limit takes a whole number from 1, not "-5"',
      ],
    ];
    const data = scratch();
    for (const [args, env, message] of cases) {
      const text = await cli([...args, '--data', data], { env });
      expect(text.code, args.join(' ')).toBe(2);
      expect(errorLines(text), args.join(' ')).toHaveLength(1);
      expect(text.stderr).toContain(message);
      expect(text.stderr).not.toContain('[@x/');
      expect(text.stderr).not.toContain('secret');
      const json = await cli([...args, '--data', data, '--json'], { env });
      expect(json.code).toBe(2);
      expect(errorLines(json)).toHaveLength(1);
      expect(JSON.parse(json.stderr)).toMatchObject({
        type: 'error',
        failure: 'usage',
        exitCode: 2,
        message: expect.stringContaining(message),
      });
    }
  });

  it('the hints run as printed (node path/to/cli.js, from where the person is, with their --data)', async () => {
    const cwd = scratch();
    const data = 'my data';
    copyDataTemplate(path.join(cwd, data));
    const exec = await cli(['exec', 'Plan me a trip', '--conversation', 'hint', '--data', data], {
      cwd,
    });
    expect(exec.code, exec.stderr).toBe(0);
    const answer = hinted(exec.stdout, 'answer');
    expect(answer).toMatch(/^node \S+cli\.js answer \S+ --option N --data 'my data'$/);
    await shared.close();
    const answered = await runShell(answer.replace('--option N', '--option 2'), { cwd });
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toContain('accept "Kyoto"');
  });

  it('the hints of `pnpm --filter runner exec runner` and the root `pnpm runner` are those forms, and they work', async () => {
    const root = path.resolve(import.meta.dirname, '../../..');
    // Side by side, each on a data folder of its own: a pnpm start-up takes seconds.
    const forms = ['npx pnpm@12.4.2 --filter runner exec runner', 'npx pnpm@12.4.2 runner'];
    await Promise.all(
      forms.map(async (pnpm) => {
        const data = dataDir();
        const exec = await runShell(
          `${pnpm} exec "Plan me a trip" --conversation p --data ${data}`,
          {
            cwd: root,
          },
        );
        expect(exec.code, exec.stderr).toBe(0);
        const answer = hinted(exec.stdout, 'answer');
        expect(answer.startsWith(`${pnpm} answer `), answer).toBe(true);
        const answered = await runShell(answer.replace('--option N', '--option 1'), { cwd: root });
        expect(answered.code, answered.stderr).toBe(0);
        expect(answered.stdout).toContain('accept "Lisbon"');
      }),
    );
  });

  it('questions show their options (exec, wake, run-waiting); wake says who it resumes before the run speaks', async () => {
    const data = dataDir();
    const first = await cli(['exec', 'Plan', '--conversation', 'o', '--data', data]);
    expect(first.stdout).toContain(
      '? Where would you like to go?\n  1) Lisbon\n  2) Kyoto\n  3) Reykjavik',
    );
    // Again, replacing it: the open question is stopped first, and said before the turn prints.
    const exec = await cli([
      'exec',
      'Plan',
      '--conversation',
      'o',
      '--replace',
      '--data',
      data,
      '--json',
    ]);
    const waiting = last(exec.events);
    expect(waiting).toMatchObject({
      type: 'run-waiting',
      options: ['Lisbon', 'Kyoto', 'Reykjavik'],
    });
    const again = await cli(['exec', 'Plan', '--conversation', 'o', '--replace', '--data', data]);
    expect(again.stdout.indexOf('stopped 1 open question of o first')).toBeGreaterThanOrEqual(0);
    expect(again.stdout.indexOf('stopped 1 open question')).toBeLessThan(
      again.stdout.indexOf('assistant:'),
    );
    const token = hinted(again.stdout, 'answer').split(' ')[3] as string;
    expect((await cli(['answer', token, '--option', '3', '--data', data])).code).toBe(0);

    const wake = await cli(['wake', '--once', '--data', data]);
    expect(wake.code, wake.stderr).toBe(0);
    const header = wake.stdout.indexOf(`resumed ${token} (accept "Reykjavik") of o`);
    expect(header).toBeGreaterThanOrEqual(0);
    expect(wake.stdout.indexOf('[o] assistant: Reykjavik, good choice.')).toBeGreaterThan(header);
    expect(wake.stdout).toContain('? How many days in Reykjavik?');
  });

  it('wake and stop say what happened: idle, ready, unknown conversation (exit 3)', async () => {
    const data = dataDir();
    const idle = await cli(['wake', '--once', '--data', data]);
    expect(idle.code).toBe(0);
    expect(idle.stdout).toContain('nothing to resume');
    const idleJson = await cli(['wake', '--once', '--data', data, '--json']);
    expect(idleJson.events).toEqual([{ type: 'idle' }]);

    await shared.close();
    const wake = startCli(['wake', '--data', data, '--json']);
    await waitForOutput(wake, '"type":"ready"');
    wake.kill('SIGTERM');
    const ended = await finished(wake);
    expect(ended.events[0]).toMatchObject({ type: 'ready', concurrency: 1 });

    const stop = await cli(['stop', 'nosuchconv', '--data', data]);
    expect(stop.code).toBe(3);
    expect(stop.stderr).toContain('no conversation nosuchconv');
  });

  it('paused-states: list --conversation, get TOKEN, list --all with the action and who answered; after purge it says so', async () => {
    const data = dataDir();
    const tokens: Record<string, string> = {};
    for (const conversation of ['a', 'b']) {
      const exec = await cli([
        'exec',
        'Plan',
        '--conversation',
        conversation,
        '--data',
        data,
        '--json',
      ]);
      tokens[conversation] = last(exec.events).token as string;
    }
    const listed = await cli([
      'paused-states',
      'list',
      '--conversation',
      'b',
      '--data',
      data,
      '--json',
    ]);
    expect(listed.events.map((e) => e.token)).toEqual([tokens.b]);

    const pending = await cli([
      'paused-states',
      'get',
      tokens.a as string,
      '--data',
      data,
      '--json',
    ]);
    expect(pending.events[0]).toMatchObject({ token: tokens.a, resumed: false, answeredBy: null });

    const declined = await cli([
      'answer',
      tokens.a as string,
      '--decline',
      'too',
      'far',
      '--data',
      data,
    ]);
    expect(declined.code, declined.stderr).toBe(0);
    const me = userInfo().username;
    const got = await cli(['paused-states', 'get', tokens.a as string, '--data', data]);
    expect(got.stdout).toContain(`→ decline "too far" by ${me}`);
    const gotJson = await cli([
      'paused-states',
      'get',
      tokens.a as string,
      '--data',
      data,
      '--json',
    ]);
    expect(gotJson.events[0]).toMatchObject({ answeredBy: me, answer: { action: 'decline' } });
    const stopped = await cli(['stop', 'b', '--data', data]);
    expect(stopped.code).toBe(0);
    const all = await cli(['paused-states', 'list', '--all', '--data', data]);
    expect(all.stdout).toContain(`→ decline "too far" by ${me}`);
    expect(all.stdout).toMatch(/→ cancel "\[auto-terminated/);

    const unknown = await cli(['paused-states', 'get', 'no-such-token', '--data', data]);
    expect(unknown.code).toBe(3);
    expect(errorLines(unknown)).toEqual([
      'error: no question has the token no-such-token: `runner paused-states list` lists the pending ones',
    ]);

    // Its run resumed and finished: purge keeps nothing of a run that may yet resume.
    expect((await cli(['wake', '--once', '--data', data])).code).toBe(0);
    const purged = await cli(['paused-states', 'purge', '--older-than', '0s', '--data', data]);
    expect(purged.stdout).toContain('deleted 2 answered questions');
    const empty = await cli(['paused-states', 'list', '--all', '--data', data]);
    expect(empty.stdout).not.toContain('no questions yet');
    expect(empty.stdout).toContain('answered ones are gone');
  });

  it('a decline is handled as a decline: the model acknowledges it and pastes it nowhere', async () => {
    const data = dataDir();
    const exec = await cli(['exec', 'Plan', '--conversation', 'd', '--data', data, '--json']);
    const token = last(exec.events).token as string;
    await cli(['answer', token, '--decline', 'too far', '--data', data]);
    const wake = await cli(['wake', '--once', '--data', data, '--json']);
    const done = last(wake.events);
    expect(done).toMatchObject({ type: 'run-completed' });
    const transcript = JSON.stringify(done.messages);
    expect(transcript).toContain('Understood, you declined (\\"too far\\")');
    expect(transcript).not.toContain('good choice');
    expect(transcript).not.toContain('How many days');
  });

  it('chat --resume alone resumes the latest waiting session; leaving prints the exact resume command', async () => {
    const cwd = scratch();
    const data = 'chats';
    copyDataTemplate(path.join(cwd, data));
    const first = await cli(['chat', '--session', 'older', '--data', data], {
      cwd,
      input: 'Plan me a trip\n',
    });
    expect(first.code, first.stderr).toBe(0);
    // Ctrl-C at the question: the question stays saved and the command to resume it is printed.
    await shared.close();
    const second = startCli(['chat', '--session', 'newer', '--data', data], { cwd });
    second.stdin?.write('Plan me a trip\n');
    await waitForOutput(second, '? Where would you like to go?');
    second.kill('SIGINT');
    const interrupted = await finished(second);
    expect(interrupted.code).toBe(0);
    const resume = hinted(interrupted.stdout, 'the question waits; answer it later with');
    expect(resume).toMatch(/^node \S+cli\.js chat --resume --session newer --data chats$/);

    // An out-of-range choice lists the valid ones; then the resumed session completes.
    const resumed = await cli(['chat', '--resume', '--data', data], {
      cwd,
      input: '7\n2\n5\nyes\n/quit\n',
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('resumed session newer (1 message)');
    expect(resumed.stdout).toContain('choose 1 to 3 (1) Lisbon  2) Kyoto  3) Reykjavik)');
    expect(resumed.stdout).toContain('Booked: Kyoto, 5 days.');

    // The printed command (the older session's) runs as printed.
    const older = hinted(first.stdout, 'the question waits; answer it later with');
    await shared.close();
    const finishedOlder = await runShell(older, { cwd, input: '1\n3\nno\n/quit\n' });
    expect(finishedOlder.code, finishedOlder.stderr).toBe(0);
    expect(finishedOlder.stdout).toContain('resumed session older');
    expect(finishedOlder.stdout).toContain('nothing was booked');

    const none = await cli(['chat', '--resume', '--data', data], { cwd, input: '' });
    expect(none.code).toBe(3);
    expect(none.stderr).toContain('no chat session waits on a question');
  });
});
