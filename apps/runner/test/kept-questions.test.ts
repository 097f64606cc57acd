import { writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { answer, startRun } from '../src/executive/index.js';
import { modelFromId } from '../src/model/index.js';
import { openStorage } from '../src/storage/index.js';
import { type CliResult, dataDirs, runShell, sharedStorage } from './run-cli.js';

// What a person typed or decided is never lost as a side effect: exec refuses to cancel an
// open question, purge keeps what an unfinished run needs, a second answer says who gave
// the first.

const dataDir = dataDirs();
// One storage open across the commands of a folder; closed before a process opens the folder.
const shared = sharedStorage();
const cli = shared.run;
const last = <T>(list: T[]): T => list[list.length - 1] as T;
const errorLines = (result: CliResult) => result.stderr.trimEnd().split('\n');

describe('runner keeps questions and answers (embedded default)', { timeout: 300_000 }, () => {
  it('exec on a conversation with an open question or an answered run is refused (exit 5) with how to replace it; --replace, as printed, starts over', async () => {
    const data = dataDir();
    const first = await cli(['exec', 'Plan', '--conversation', 'q', '--data', data, '--json']);
    const token = last(first.events).token as string;

    const refused = await cli(['exec', 'Plan again', '--conversation', 'q', '--data', data]);
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
    const answered = await cli(['answer', token, '--option', '2', '--data', data]);
    expect(answered.code, answered.stderr).toBe(0);
    const ready = await cli([
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

    await shared.close();
    const replaced = await runShell(replace, { cwd: process.cwd() });
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stdout).toContain('stopped 1 unfinished run of q first');
    expect(replaced.stdout).toContain('? Where would you like to go?');
  });

  it('a failed run that retry could resume is open work too: exec names it and how to retry it', async () => {
    const data = dataDir();
    // Made in process: what is under test is the exec that meets it.
    const storage = await openStorage({ dataDir: data, command: 'test', log: () => {} });
    let runId: string;
    try {
      const run = await startRun(storage, modelFromId('scripted:trip'), 'Plan', 'failed', {
        event: () => {},
      });
      if (run.status !== 'waiting') throw new Error(`exec: ${run.status}`);
      await answer(storage, run.token, { action: 'accept', content: 'Kyoto' });
      const owner = 'test-worker';
      const claimed = await storage.runs().claim({ owner, leaseMs: 60_000 });
      runId = claimed?.run.runId ?? '';
      await storage.runs().fail(runId, owner, 'the model is gone', undefined);
    } finally {
      await storage.close();
    }
    const refused = await cli(['exec', 'Plan', '--conversation', 'failed', '--data', data]);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain(
      `conversation failed has a failed run ${runId} that retry can resume`,
    );
    expect(refused.stderr).toContain(`retry ${runId}`);
  });

  it('a fresh start (a made-up id) reads no open work: only exec without --conversation asks for one', async () => {
    const data = dataDir();
    const storage = await openStorage({ dataDir: data, command: 'test', log: () => {} });
    try {
      const quiet = { event: () => {} };
      const model = modelFromId('scripted:trip');
      const first = await startRun(storage, model, 'Plan', 'made-up', quiet);
      if (first.status !== 'waiting') throw new Error(`exec: ${first.status}`);
      await expect(startRun(storage, model, 'Plan', 'made-up', quiet)).rejects.toThrow(
        /open question/,
      );
      // Fresh says the id is new: its open question is neither looked for nor stopped.
      const second = await startRun(storage, model, 'Plan', 'made-up', quiet, { fresh: true });
      expect(second.stopped).toEqual({ pauses: 0, continuations: 0, runs: 0 });
      expect(await storage.pauses().listPending('made-up')).toHaveLength(2);
    } finally {
      await storage.close();
    }
    const made = await cli(['exec', 'Plan', '--data', data, '--json']);
    expect(made.code, made.stderr).toBe(0);
    expect(last(made.events)).toMatchObject({
      type: 'run-waiting',
      conversationId: expect.stringMatching(/^c-[a-z0-9]+$/),
    });
  });

  it('purge never touches what an unfinished run needs: its question and answer stay, show prints them; --dry-run says what it would delete and deletes nothing', async () => {
    const data = dataDir();
    const tokens: Record<string, string> = {};
    for (const conversation of ['live', 'gone']) {
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
    // live: answered, its run ready (in flight); gone: stopped, its run cancelled (finished).
    expect(
      (await cli(['answer', tokens.live as string, '--option', '2', '--data', data])).code,
    ).toBe(0);
    expect((await cli(['stop', 'gone', '--data', data])).code).toBe(0);

    const purge = ['paused-states', 'purge', '--older-than', '0d', '--data', data];
    const dry = await cli([...purge, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(
      /^would delete 1 answered question and 1 finished run older than \S+; kept 1 answered question of runs not finished \(waiting, ready, running or failed\); nothing was deleted \(--dry-run\)\n$/,
    );
    const all = await cli(['paused-states', 'list', '--all', '--data', data, '--json']);
    expect(all.events).toHaveLength(2);

    const purged = await cli([...purge, '--json']);
    expect(last(purged.events)).toMatchObject({
      type: 'purged',
      dryRun: false,
      deleted: 1,
      runs: 1,
      kept: 1,
    });
    const show = await cli(['show', 'live', '--data', data]);
    expect(show.stdout).toContain(
      `? Where would you like to go?  → accept "Kyoto"  (${tokens.live})`,
    );
    const woke = await cli(['wake', '--once', '--data', data]);
    expect(woke.stdout).toContain(`resumed ${tokens.live} (accept "Kyoto") of live`);
  });

  it('a second answer, alone or in a batch, changes nothing and says how the question was answered, by whom and when (exit 5)', async () => {
    const data = dataDir();
    const exec = await cli(['exec', 'Plan', '--conversation', 'twice', '--data', data, '--json']);
    const token = last(exec.events).token as string;
    expect((await cli(['answer', token, '--option', '2', '--data', data])).code).toBe(0);
    const me = userInfo().username;
    const first = `question ${token} was already answered: accept "Kyoto" by ${me} at `;

    const again = await cli(['answer', token, '--decline', '--data', data]);
    expect(again.code).toBe(5);
    expect(errorLines(again)).toHaveLength(1);
    expect(again.stderr.startsWith(`error: ${first}`), again.stderr).toBe(true);
    expect(again.stderr.slice(`error: ${first}`.length)).toMatch(/^\d{4}-\d\d-\d\dT\S+Z\n$/);
    const option = await cli(['answer', token, '--option', '1', '--data', data]);
    expect(option.code).toBe(5);
    expect(option.stderr).toContain(first);

    const file = path.join(data, 'batch.json');
    writeFileSync(
      file,
      JSON.stringify([
        { token, action: 'decline', content: '' },
        { token: 'no-such-token', action: 'accept', content: 'x' },
      ]),
    );
    const batch = await cli(['answer', '--batch', file, '--data', data, '--json']);
    expect(batch.code).toBe(5);
    const error = JSON.parse(batch.stderr);
    expect(error).toMatchObject({ failure: 'conflict', exitCode: 5 });
    expect(error.message).toContain(`batch not applied, nothing was answered: ${first}`);
    expect(error.message).toContain('no question has the token no-such-token');
    const got = await cli(['paused-states', 'get', token, '--data', data, '--json']);
    expect(got.events[0]).toMatchObject({ answer: { action: 'accept', content: 'Kyoto' } });
  });
});
