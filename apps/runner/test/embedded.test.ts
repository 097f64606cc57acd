import { describe, expect, it } from 'vitest';
import {
  dataDirs,
  finished,
  runCli,
  runInProcess,
  sharedStorage,
  startCli,
  waitForOutput,
} from './run-cli.js';
import { expectPaired } from './transcript.js';

const dataDir = dataDirs();
// One storage open across the commands of a folder; closed before a process opens the folder.
const shared = sharedStorage();
const cli = shared.run;

const last = <T>(list: T[]): T => list[list.length - 1] as T;

describe('runner on the embedded default (PGlite + files)', { timeout: 300_000 }, () => {
  it('exec → answer → wake --once, three times, completes with every tool_use answered once', async () => {
    // A folder never used before: the first command sets the database up.
    const data = dataDir({ empty: true });
    // Commands of their own storage: what it checks starts with a first opening.
    const exec = await runInProcess([
      'exec',
      'Plan me a trip',
      '--conversation',
      'trip-1',
      '--data',
      data,
      '--json',
    ]);
    expect(exec.code).toBe(0);
    let waiting = last(exec.events);
    expect(waiting).toMatchObject({
      type: 'run-waiting',
      status: 'waiting',
      question: 'Where would you like to go?',
    });

    const answers = [
      ['--option', '2'],
      ['--accept', '5'],
      ['--accept', 'yes'],
    ];
    let completed: Record<string, unknown> | undefined;
    for (const answer of answers) {
      const token = waiting.token as string;
      const answered = await runInProcess(['answer', token, ...answer, '--data', data]);
      expect(answered.code, answered.stderr).toBe(0);
      const woke = await runInProcess(['wake', '--once', '--data', data, '--json']);
      expect(woke.code, woke.stderr).toBe(0);
      expect(woke.events.filter((e) => e.type === 'resumed')).toHaveLength(1);
      const end = last(woke.events);
      if (end.type === 'run-completed') completed = end;
      else waiting = end;
    }
    expect(completed).toBeDefined();
    const messages = expectPaired(completed?.messages);
    expect(JSON.stringify(messages.at(-1))).toContain('Booked: Kyoto, 5 days');

    // The answered token is gone: answering again fails clearly, changing nothing.
    const again = await runInProcess([
      'answer',
      waiting.token as string,
      '--accept',
      'x',
      '--data',
      data,
    ]);
    expect(again.code).toBe(5);
    expect(again.stderr).toContain(`question ${waiting.token} was already answered: accept`);
    const nothing = await runInProcess(['wake', '--once', '--data', data, '--json']);
    expect(nothing.events.filter((e) => e.type === 'resumed')).toHaveLength(0);
  });

  it('decline tells the model; cancel ends the run without resuming it', async () => {
    const data = dataDir();
    const exec = await cli(['exec', 'Plan', '--conversation', 'c', '--data', data, '--json']);
    const token = last(exec.events).token as string;
    expect((await cli(['answer', token, '--decline', 'not now', '--data', data])).code).toBe(0);
    const woke = await cli(['wake', '--once', '--data', data, '--json']);
    const declined = last(woke.events);
    expect(declined.type).toBe('run-completed');
    expect(JSON.stringify(declined.messages)).toContain('you declined (\\"not now\\")');
    const again = await cli(['exec', 'Plan', '--conversation', 'c2', '--data', data, '--json']);
    const next = last(again.events);
    const cancel = await cli(['answer', next.token as string, '--cancel', '--data', data]);
    expect(cancel.code).toBe(0);
    const done = await cli(['wake', '--once', '--data', data, '--json']);
    expect(done.events.filter((e) => e.type === 'model-call')).toHaveLength(0);
    expect(last(done.events)).toMatchObject({ type: 'run-cancelled', conversationId: 'c2' });
  });

  it('runs ordinary tools to completion, and handles ask_user next to a sibling without suspending', async () => {
    const data = dataDir();
    const tools = await cli([
      'exec',
      'Budget',
      '--model',
      'scripted:tools',
      '--data',
      data,
      '--json',
    ]);
    expect(last(tools.events).type).toBe('run-completed');
    expectPaired(last(tools.events).messages);
    expect(tools.events.some((e) => e.type === 'plan-updated')).toBe(true);

    const siblings = await cli([
      'exec',
      'Kyoto',
      '--model',
      'scripted:siblings',
      '--conversation',
      's',
      '--data',
      data,
      '--json',
    ]);
    const waiting = last(siblings.events);
    expect(waiting).toMatchObject({ type: 'run-waiting', question: 'Which month do you travel?' });
    expect(siblings.events.filter((e) => e.type === 'model-call')).toHaveLength(2);
    await cli(['answer', waiting.token as string, '--option', '1', '--data', data]);
    const woke = await cli(['wake', '--once', '--data', data, '--json']);
    const done = last(woke.events);
    expect(done.type).toBe('run-completed');
    const messages = expectPaired(done.messages);
    // The sibling ran once; the first ask_user got the "ask alone" error result.
    const results = JSON.stringify(messages);
    expect(results.match(/"name":"get_weather"/g)).toHaveLength(1);
    expect(results).toContain('must be the only tool call');
    expect(JSON.stringify(messages.at(-1))).toContain('Kyoto in April');
  });

  it('stop closes every open question; exec --replace on a conversation with an open question stops it first', async () => {
    const data = dataDir();
    const first = await cli(['exec', 'Plan', '--conversation', 'k', '--data', data, '--json']);
    const token = last(first.events).token as string;
    const second = await cli([
      'exec',
      'Plan again',
      '--conversation',
      'k',
      '--replace',
      '--data',
      data,
    ]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('stopped 1 open question of k first');
    const late = await cli(['answer', token, '--accept', 'x', '--data', data]);
    expect(late.code).toBe(5);
    expect(late.stderr).toContain(
      `question ${token} was already answered: closed when its conversation k was stopped, at `,
    );

    // stop, retry and show also as the real binary.
    await shared.close();
    const stop = await runCli(['stop', 'k', '--data', data, '--json']);
    expect(last(stop.events)).toMatchObject({ type: 'stopped', pauses: 1, continuations: 1 });
    const list = await cli(['paused-states', 'list', '--data', data, '--json']);
    expect(list.events).toHaveLength(0);
    const all = await cli(['paused-states', 'list', '--all', '--data', data, '--json']);
    expect(all.events).toHaveLength(2);
    expect(all.events.every((e) => e.resumed === true)).toBe(true);
    const purge = await cli([
      'paused-states',
      'purge',
      '--older-than',
      '0s',
      '--data',
      data,
      '--json',
    ]);
    expect(last(purge.events)).toMatchObject({ type: 'purged', deleted: 2 });
  });

  it('records each run: a failed resume is shown by runs, made ready by retry, and show tells the story', async () => {
    const data = dataDir();
    const exec = await cli(['exec', 'Plan', '--conversation', 'r', '--data', data, '--json']);
    const waiting = last(exec.events);
    expect(waiting).toMatchObject({
      type: 'run-waiting',
      options: ['Lisbon', 'Kyoto', 'Reykjavik'],
    });
    const runId = waiting.runId as string;
    await cli(['answer', waiting.token as string, '--option', '1', '--data', data]);

    // Every attempt fails and only one is allowed: the run fails, and stays answered.
    await shared.close();
    const failed = await runCli(['wake', '--once', '--data', data, '--json'], {
      env: { RUNNER_SCRIPTED_FAIL: '1', RUNNER_MAX_ATTEMPTS: '1' },
    });
    expect(failed.code).toBe(1);
    expect(failed.events).toContainEqual(
      expect.objectContaining({ type: 'run-failed', runId, attempt: 1 }),
    );
    expect(failed.stderr).toContain(`retry ${runId}`);
    const listed = await cli(['runs', '--status', 'failed', '--data', data, '--json']);
    expect(listed.events).toEqual([
      expect.objectContaining({
        type: 'run',
        runId,
        conversationId: 'r',
        status: 'failed',
        attempts: 1,
        lastError: '[scripted] 503 simulated outage (RUNNER_SCRIPTED_FAIL)',
      }),
    ]);

    await shared.close();
    expect((await runCli(['retry', runId, '--data', data])).code).toBe(0);
    const woke = await cli(['wake', '--once', '--data', data, '--json']);
    expect(woke.code, woke.stderr).toBe(0);
    expect(last(woke.events)).toMatchObject({ type: 'run-waiting', runId });

    await shared.close();
    const story = await runCli(['show', 'r', '--data', data, '--json']);
    expect(story.code, story.stderr).toBe(0);
    expect(story.events).toHaveLength(1);
    const [told] = story.events as unknown as Array<{
      run: { status: string; attempts: number };
      questions: Array<{ question: string; answer: { content: string } | null }>;
      messages: unknown[];
    }>;
    expect(told?.run).toMatchObject({ status: 'waiting', attempts: 0 });
    expect(told?.questions.map((q) => [q.question, q.answer?.content ?? null])).toEqual([
      ['Where would you like to go?', 'Lisbon'],
      ['How many days in Lisbon?', null],
    ]);
    expectPaired(told?.messages.slice(0, -1));

    // A run that has not failed cannot be retried (a conflict, exit 5); unknown runs and
    // conversations are exit 3.
    const notFailed = await cli(['retry', runId, '--data', data]);
    expect(notFailed.code).toBe(5);
    expect(notFailed.stderr).toContain('only a failed run can be retried');
    expect((await cli(['show', 'nobody', '--data', data])).code).toBe(3);
  });

  it('refuses bad usage with exit 2 and a second process on the data folder with exit 4', async () => {
    const data = dataDir();
    expect((await runCli(['exec', '--data', data])).code).toBe(2);
    expect((await runCli(['answer', 'tok', '--data', data])).code).toBe(2);
    expect(
      (await runCli(['paused-states', 'purge', '--older-than', 'soon', '--data', data])).code,
    ).toBe(2);
    const wake = startCli(['wake', '--data', data]);
    await waitForOutput(wake, 'waiting for answers');
    const blocked = await runCli(['exec', 'x', '--data', data]);
    expect(blocked.code).toBe(4);
    expect(blocked.stderr).toContain('in use by `runner wake`');
    wake.kill('SIGINT');
    expect((await finished(wake)).code).toBe(0);
  });
});
