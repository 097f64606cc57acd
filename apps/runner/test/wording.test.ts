import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HELP, HELP_TOPICS } from '../src/commands/help.js';
import { VARIABLES, type Variable } from '../src/config/index.js';
import { type CliResult, dataDirs, runCli, runShell, sharedStorage } from './run-cli.js';

// What the runner says must help: options where a person puts them, a version, each
// command's help, ids and commands printed whole, and errors that name what to do next.

const dataDir = dataDirs();
// One storage open across the commands of a folder; closed before a process opens the folder.
const shared = sharedStorage();
const cli = shared.run;
const errorLines = (result: CliResult) => result.stderr.trimEnd().split('\n');

/** What the CLI prints on stdout, having ended with exit 0. */
async function runText(args: string[]): Promise<string> {
  const result = await cli(args);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the runner says what helps', { timeout: 300_000 }, () => {
  it('options of every command may come before the command (--json, --data, --model); the priority in words', async () => {
    const data = dataDir();
    const runs = await cli(['--json', 'runs', '--data', data]);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.events).toEqual([{ type: 'none' }]);
    const exec = await cli([
      '--data',
      data,
      '--json',
      '--model=scripted:trip',
      'exec',
      'Plan me a trip',
      '--conversation',
      'before',
    ]);
    expect(exec.code, exec.stderr).toBe(0);
    expect(exec.events.at(-1)).toMatchObject({ type: 'run-waiting', conversationId: 'before' });
    const listed = await cli(['--data', data, '--json', 'paused-states', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.events).toEqual([expect.objectContaining({ conversationId: 'before' })]);
    // The priority in the page's word (1 is "high"), not "p1".
    const text = await cli(['paused-states', 'list', '--data', data]);
    expect(text.stdout).toContain('[before] high ask_user: Where would you like to go?');
    expect(text.stdout).not.toMatch(/ p\d /);
    const unknown = await cli(['--json', 'nope']);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stderr)).toMatchObject({
      message: expect.stringContaining('"nope"'),
    });
  });

  it('--version prints the version of its package.json', async () => {
    const { version } = JSON.parse(
      readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    const text = await runCli(['--version']);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`runner ${version}\n`);
    const json = await cli(['--json', '--version']);
    expect(json.events).toEqual([{ type: 'version', version }]);
  });

  it('`runner help COMMAND` and `runner COMMAND --help` print that command’s help, for every command', async () => {
    const main = await runText(['--help']);
    const commands = Object.keys(HELP).filter((name) => name !== 'main');
    expect(commands).toContain('exec');
    await Promise.all(
      commands.map(async (command) => {
        expect(main, command).toContain(`  ${command}`);
        const [help, flag] = await Promise.all([
          runText(['help', command]),
          runText([command, '--help']),
        ]);
        expect(help, command).toBe(`${HELP[command]}\n`);
        expect(flag, command).toBe(help);
        expect(help, command).toMatch(new RegExp(`^usage: runner ${command}\\b`));
      }),
    );
    for (const args of [['help', 'nope'], ['nope']]) {
      const unknown = await cli(args);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('unknown command "nope"');
    }
  });

  it('`runner --help` fits a screen (60 lines) and names its topics; `runner help environment` lists every variable', async () => {
    const main = await runText(['--help']);
    expect(main.trimEnd().split('\n').length).toBeLessThanOrEqual(60);
    for (const topic of Object.keys(HELP_TOPICS)) {
      expect(main, topic).toContain(`  ${topic}  `);
      expect(await runText(['help', topic]), topic).toBe(`${HELP_TOPICS[topic]}\n`);
    }
    const environment = await runText(['help', 'environment']);
    for (const variable of Object.values(VARIABLES) as Variable<unknown>[]) {
      // A documented variable has an entry of its own; the system's are named in one line.
      const entry = variable.description === undefined ? '(^|[ ,:])' : '^ {2}';
      expect(environment, variable.name).toMatch(
        new RegExp(`${entry}${variable.name}($|[ ,])`, 'm'),
      );
    }
  });

  it('exec prints the conversation id it made, and the hints name each answer once', async () => {
    const data = dataDir();
    const exec = await cli(['exec', 'Plan me a trip', '--data', data]);
    expect(exec.code, exec.stderr).toBe(0);
    const id = /^conversation (c-[a-z0-9]+)$/m.exec(exec.stdout)?.[1];
    expect(id, exec.stdout).toBeDefined();
    const show = await cli(['show', id as string, '--data', data, '--json']);
    expect(show.code, show.stderr).toBe(0);
    const token = /waiting — token (\S+)/.exec(exec.stdout)?.[1] as string;
    await cli(['answer', token, '--option', '2', '--data', data]);
    const free = await cli(['wake', '--once', '--data', data]);
    expect(free.code, free.stderr).toBe(0);
    const next = /waiting — token (\S+)/.exec(free.stdout)?.[1] as string;
    await cli(['answer', next, '--accept', '5', '--data', data]);
    const approval = await cli(['wake', '--once', '--data', data]);
    expect(approval.stdout).toContain('? Approve: Book flights');
    const hints = [exec, free, approval].map(
      (r) => r.stdout.split('\n').find((l) => l.includes('answer: ')) ?? '',
    );
    for (const hint of hints) {
      expect(hint).toContain('(or ');
      for (const flag of ['--accept', '--decline', '--cancel']) {
        expect(hint.split(flag).length - 1, `${flag} in: ${hint}`).toBeLessThanOrEqual(1);
      }
    }
    expect(hints[0]).toContain('--option N');
    expect(hints[2]).toContain('--accept');
  });

  it('exec --goal-file PATH (and - for standard input) reads a goal too long for a command line', async () => {
    const data = dataDir();
    const goal = `Plan me a trip. ${'Details. '.repeat(20_000)}`.trim();
    const file = path.join(data, 'goal.txt');
    writeFileSync(file, `${goal}\n`);
    const firstUserText = async (conversation: string) => {
      const show = await cli(['show', conversation, '--data', data, '--json']);
      const [told] = show.events as unknown as Array<{
        messages: Array<{ role: string; content: Array<{ text?: string }> }>;
      }>;
      return told?.messages.find((m) => m.role === 'user')?.content[0]?.text;
    };
    const fromFile = await cli([
      'exec',
      '--goal-file',
      file,
      '--conversation',
      'long',
      '--data',
      data,
    ]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(await firstUserText('long')).toBe(goal);
    const fromStdin = await cli(
      ['exec', '--goal-file', '-', '--conversation', 'piped', '--data', data],
      { input: goal },
    );
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(await firstUserText('piped')).toBe(goal);

    const refusals: Array<[string[], string]> = [
      [['--goal-file', path.join(data, 'missing.txt')], 'cannot be read: ENOENT'],
      [['Plan', '--goal-file', file], 'not both'],
      [['--goal-file', '-'], 'holds no goal'],
    ];
    for (const [args, message] of refusals) {
      const refused = await cli(['exec', ...args, '--data', data], { input: '' });
      expect(refused.code, args.join(' ')).toBe(2);
      expect(errorLines(refused)).toHaveLength(1);
      expect(refused.stderr).toContain(message);
    }
  });

  it('an exec that cannot reach its model names the URL it tried', async () => {
    const port = await closedPort();
    const data = dataDir();
    const cases: Array<[string, Record<string, string>, string]> = [
      ['openai:local', { OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` }, '/v1'],
      [
        'anthropic:claude-x',
        { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` },
        '',
      ],
    ];
    for (const [model, env, suffix] of cases) {
      const exec = await cli(['exec', 'Hello', '--model', model, '--data', data], {
        env: { ...env, RUNNER_MODEL_RETRIES: '0' },
      });
      expect(exec.code, model).toBe(1);
      expect(errorLines(exec), model).toHaveLength(1);
      expect(exec.stderr, model).toContain(
        `cannot reach http://127.0.0.1:${port}${suffix} (ECONNREFUSED)`,
      );
    }
  });

  it('the demo prints each step as a whole command that runs as printed', async () => {
    const cwd = dataDir({ empty: true });
    const demo = await runCli(['demo', '--data', 'here'], { cwd });
    expect(demo.code, demo.stderr).toBe(0);
    const steps = demo.stdout
      .split('\n')
      .filter((line) => line.startsWith('$ '))
      .map((line) => line.slice(2));
    expect(steps).toHaveLength(7);
    for (const step of steps) {
      expect(step).not.toContain('…');
      expect(step).toContain('--data here/demo');
    }
    const answers = steps.filter((step) => / answer /.test(step));
    expect(answers[0]).toMatch(/ answer \S+ --option 2 --data here\/demo {3}# /);
    // Already answered by the demo: the command runs, and says so (exit 5, a conflict).
    expect((await runShell(answers[0] as string, { cwd })).code).toBe(5);
  });

  it('chat --list lists the sessions and how to resume each; chat --resume points to it', async () => {
    const cwd = dataDir({ empty: true });
    const data = 'chats';
    const empty = await cli(['chat', '--list', '--data', data], { cwd });
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toContain('no chat sessions yet');
    const none = await cli(['chat', '--resume', '--data', data], { cwd, input: '' });
    expect(none.code).toBe(3);
    expect(none.stderr).toContain(`chat --list --data ${data}`);

    const asked = await cli(['chat', '--session', 'trip', '--data', data], {
      cwd,
      input: 'Plan me a trip\n',
    });
    expect(asked.code, asked.stderr).toBe(0);
    const listed = await cli(['chat', '--list', '--data', data], { cwd });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('trip  waits on a question: Where would you like to go?');
    const resume = /resume: (.+)$/m.exec(listed.stdout)?.[1] ?? '';
    expect(resume).toMatch(/chat --resume --session trip --data chats$/);
    await shared.close();
    const resumed = await runShell(resume, { cwd, input: '2\n/quit\n' });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('resumed session trip');
    const json = await cli(['chat', '--list', '--data', data, '--json'], { cwd });
    expect(json.events).toEqual([
      {
        type: 'session',
        sessionId: 'trip',
        waiting: true,
        question: 'How many days in Kyoto?',
      },
    ]);
    const missing = await cli(['chat', '--resume', '--session', 'nope', '--data', data], {
      cwd,
      input: '',
    });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('chat --list');
  });
});
