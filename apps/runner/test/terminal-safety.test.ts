import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { AskUserStore } from '@x/askuser';
import { PostgresRunQueue } from '@x/continuation-postgres';
import { drizzle } from 'drizzle-orm/pglite';
import { describe, expect, it } from 'vitest';
import { type CliResult, dataDirs, sharedStorage } from './run-cli.js';

// Whatever a person or a model typed reaches an operator's terminal as text, never as
// terminal commands: ids are safe ids at entry; free text is printed with control
// characters escaped; --json prints the data as it is.

const dataDir = dataDirs();
// One storage open across the commands of a folder.
const shared = sharedStorage();
const cli = shared.run;
const last = <T>(list: T[]): T => list[list.length - 1] as T;
const errorLines = (result: CliResult) => result.stderr.trimEnd().split('\n');
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/;

describe('runner output is safe for a terminal (embedded default)', { timeout: 300_000 }, () => {
  it('a conversation or run id that is not a safe id is refused at entry: exit 2, one line, shown escaped', async () => {
    const data = dataDir();
    const evil = 'x\u001b[2J';
    const cases = [
      ['exec', 'Plan', '--conversation', evil],
      ['show', evil],
      ['stop', evil],
      ['runs', '--conversation', evil],
      ['paused-states', 'list', '--conversation', evil],
      ['retry', evil],
      ['exec', 'Plan', '--conversation', '../up'],
      ['show', 'a'.repeat(201)],
    ];
    // The ids are checked before the data folder is opened, so these can run side by side.
    const results = await Promise.all(cases.map((args) => cli([...args, '--data', data])));
    for (const [i, result] of results.entries()) {
      const args = cases[i]?.join(' ');
      expect(result.code, args).toBe(2);
      expect(errorLines(result), args).toHaveLength(1);
      expect(result.stderr, args).toMatch(
        / (is not a safe id|is longer than 200 characters): use /,
      );
      expect(result.stderr, args).not.toMatch(CONTROL);
    }
    expect(results[0]?.stderr).toContain('--conversation "x\\u001b[2J" is not a safe id');
  });

  it('goals, questions, answers and ids from the store print with control characters escaped; --json is unchanged', async () => {
    const data = dataDir();
    const exec = await cli([
      'exec',
      'Plan \u001b[2J a trip',
      '--conversation',
      't',
      '--data',
      data,
      '--json',
    ]);
    const token = last(exec.events).token as string;
    const accept = 'Kyoto\u001b]0;pwned\u0007\u202e';
    const answered = await cli(['answer', token, '--accept', accept, '--data', data]);
    expect(answered.stdout).toContain('accept "Kyoto\\x1b]0;pwned\\x07\\u202e"');

    // Rows another program wrote (the packages take any conversation id) before ids were checked.
    const legacy = 'legacy\u001b[2J';
    await shared.close();
    const client = new PGlite(path.join(data, 'pglite'));
    try {
      const db = drizzle({ client });
      await new AskUserStore(db).insert({
        token: 'legacy-token',
        conversationId: legacy,
        kind: 'ask_user',
        question: 'Deploy?\u001b[31m\r',
        toolCallId: 'call-legacy',
      });
      await new PostgresRunQueue(db).create({
        runId: 'legacy-run',
        conversationId: legacy,
        status: 'completed',
        messages: [],
      });
    } finally {
      await client.close();
    }

    const printed = {
      answered,
      list: await cli(['paused-states', 'list', '--data', data]),
      all: await cli(['paused-states', 'list', '--all', '--data', data]),
      show: await cli(['show', 't', '--data', data]),
      runs: await cli(['runs', '--data', data]),
    };
    for (const [name, result] of Object.entries(printed)) {
      expect(result.code, `${name}: ${result.stderr}`).toBe(0);
      expect(result.stdout, name).not.toMatch(CONTROL);
    }
    expect(printed.list.stdout).toContain('[legacy\\x1b[2J] ask_user: Deploy?\\x1b[31m\\x0d');
    expect(printed.all.stdout).toContain('→ accept "Kyoto\\x1b]0;pwned\\x07\\u202e"');
    expect(printed.show.stdout).toContain('user: Plan \\x1b[2J a trip');
    expect(printed.runs.stdout).toContain('legacy-run  completed [legacy\\x1b[2J]');

    const json = await cli(['paused-states', 'list', '--all', '--data', data, '--json']);
    const questions = json.events.map((e) => e.question);
    expect(questions).toContain('Deploy?\u001b[31m\r');
    expect(json.events.find((e) => e.token === token)?.answer).toEqual({
      action: 'accept',
      content: accept,
    });
  });
});
