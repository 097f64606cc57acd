import { spawnSync } from 'node:child_process';
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { userInfo } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finished, runCli, runInProcess, startCli, waitForOutput } from './run-cli.js';
import { call, dataDirs, json, type Served, serve, until } from './serve-harness.js';

/** A GET (or with `body`, a JSON POST) over the data folder's socket. */
function overSocket(
  socketPath: string,
  at: string,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const post = { method: 'POST', headers: { 'content-type': 'application/json' } };
    const req = request({ socketPath, path: at, ...(body ? post : {}) }, (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

const dataDir = dataDirs();
const env = { RUNNER_MODEL: 'scripted:trip' };
/** A command run in this process, as serve-harness's `run` runs it as one of its own. */
const run = (args: string[], extra: Record<string, string | undefined> = {}) =>
  runInProcess(args, { env: { RUNNER_TOKEN: '', ...extra } });

/** What a command printed, with the ids, times and folder that differ between two folders. */
function same(text: string, data: string): string {
  return text
    .replaceAll(data, 'DATA')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'ID')
    .replace(/toolu_[0-9a-z]+/g, 'TOOL')
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'TIME');
}

/** The quick start's sequence in `data`: exec, answer, (resume), show; what each printed. */
async function quickStart(data: string, resume: () => Promise<void>) {
  const printed: string[] = [];
  const step = async (args: string[]) => {
    const result = await run([...args, '--data', data], env);
    expect(result.code, result.stderr).toBe(0);
    printed.push(same(result.stdout, data), same(result.stderr, data));
    return result;
  };
  const started = await step(['exec', 'Plan me a trip', '--conversation', 'trip']);
  const token = /token (\S+)/.exec(started.stdout)?.[1] as string;
  await step(['answer', token, '--option', '2']);
  await resume();
  await step(['show', 'trip']);
  return printed;
}

describe('commands of other processes go through the serve that holds the data folder', () => {
  let server: Served;
  const data = dataDir();

  beforeAll(async () => {
    // Only the socket's own mode keeps other users out: its folders are open to all.
    chmodSync(path.dirname(data), 0o755);
    chmodSync(data, 0o755);
    server = await serve(['--data', data], env);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('listens on a socket in the folder that only its owner may open', () => {
    const socket = path.join(data, 'serve.sock');
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    const listening = JSON.parse(
      server
        .stdout()
        .split('\n')
        .find((l) => l.includes('"listening"')) ?? '{}',
    );
    expect(listening.socket).toBe(socket);
  });

  it.runIf(process.getuid?.() === 0)('refuses another OS user (nobody)', () => {
    const nobody = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
    const uid = Number(nobody.stdout.trim());
    const connect = spawnSync(
      process.execPath,
      [
        '-e',
        `require('node:net').connect(process.argv[1]).on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(1) })`,
        path.join(data, 'serve.sock'),
      ],
      { uid, gid: uid, encoding: 'utf8' },
    );
    expect(connect.stdout.trim()).toBe('EACCES');
  });

  it("runs the quick start's sequence as it runs without a server, but for the via line", async () => {
    const alone = dataDir();
    const without = await quickStart(alone, async () => {
      expect((await run(['wake', '--once', '--data', alone], env)).code).toBe(0);
    });
    const via = await quickStart(data, async () => {
      // No wake: serve's hosted loop resumes the answered run.
      await until(async () => {
        const shown = await run(['show', 'trip', '--json', '--data', data], env);
        return shown.stdout.includes('How many days');
      }, 'the hosted wake to resume the run');
    });
    const line = `via serve (pid ${server.child.pid})\n`;
    expect(via).toHaveLength(6);
    for (const [at, printed] of via.entries()) {
      // Standard error (every second entry) names the server once, and says nothing else.
      expect(printed.replace(at % 2 === 1 ? line : '', '')).toBe(without[at]);
      if (at % 2 === 1) expect(printed.startsWith(line), printed).toBe(true);
    }
    // Each local command opens PGlite (seconds on a busy machine); the ones through serve do not.
  }, 120_000);

  it('streams the same JSON events of an exec, and answers a batch', async () => {
    const alone = dataDir();
    const local = await run(
      ['exec', 'Plan me a trip', '--conversation', 'j', '--json', '--data', alone],
      env,
    );
    const hosted = await run(
      ['exec', 'Plan me a trip', '--conversation', 'j', '--json', '--data', data],
      env,
    );
    expect(hosted.code).toBe(0);
    expect(same(hosted.stdout, data)).toBe(same(local.stdout, alone));
    expect(JSON.parse(hosted.stderr)).toEqual({ type: 'via-serve', pid: server.child.pid });
    const token = hosted.events.find((e) => e.type === 'run-waiting')?.token;
    // The batch file is read here, by the command, not by the server.
    const batch = path.join(alone, 'batch.json');
    writeFileSync(batch, JSON.stringify([{ token, action: 'accept', content: 'Kyoto' }]));
    const answered = await run(['answer', '--batch', batch, '--data', data], env);
    expect(answered.stdout).toBe('answered 1 question\n');
    const stopped = await run(['stop', 'j', '--json', '--data', data], env);
    expect(stopped.events).toMatchObject([{ type: 'stopped', conversationId: 'j' }]);
  }, 60_000);

  it('starts, lists, shows and retries runs over the HTTP API, and serves it on the socket', async () => {
    const started = await call(
      new URL('/api/runs', server.url).href,
      json({ goal: 'Plan me a trip', conversation: 'api' }),
    );
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body).toMatchObject({ conversationId: 'api', result: { status: 'waiting' } });
    const listed = await call(new URL('/api/runs?conversation=api', server.url).href);
    expect(listed.body.runs).toHaveLength(1);
    const runId = listed.body.runs[0].runId as string;
    const shown = await call(new URL(`/api/runs/${runId}`, server.url).href);
    expect(shown.body.run).toMatchObject({ runId, status: 'waiting' });
    const retried = await call(new URL(`/api/runs/${runId}/retry`, server.url).href, json({}));
    expect(retried.status).toBe(409);
    const again = await call(
      new URL('/api/runs', server.url).href,
      json({ goal: 'Plan me a trip', conversation: 'api' }),
    );
    expect(again.status).toBe(409);
    // Asked for NDJSON, the run's events come as they happen, its result last.
    const streamed = await fetch(new URL('/api/runs', server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({ goal: 'Plan me a trip', conversation: 'api-stream' }),
    });
    expect(streamed.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await streamed.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.slice(0, -1).every((line) => 'event' in line)).toBe(true);
    expect(lines.map((line) => line.event?.type)).toContain('interrupt-raised');
    expect(lines.at(-1)).toMatchObject({
      conversationId: 'api-stream',
      result: { status: 'waiting', question: 'Where would you like to go?' },
    });
    // A refusal before the run starts is still its status, streamed or not.
    const refused = await fetch(new URL('/api/runs', server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({ goal: 'Plan me a trip', conversation: 'api-stream' }),
    });
    expect(refused.status).toBe(409);
    const socketList = await overSocket(
      path.join(data, 'serve.sock'),
      '/api/runs?conversation=api',
    );
    expect(socketList.status).toBe(200);
    expect(JSON.parse(socketList.body).runs[0].runId).toBe(runId);
    // A chat needs its input lines sent after it: without, serve does not read its own stdin.
    const inputless = await overSocket(path.join(data, 'serve.sock'), '/api/cli', {
      argv: ['chat'],
      modelId: 'scripted:trip',
      prefix: 'runner',
      tty: false,
      inputs: {},
    });
    expect(
      inputless.body
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([
      { err: expect.stringContaining('serve does not run "chat" for other processes without') },
      { exit: 2 },
    ]);
    // Running commands is the socket's alone: over TCP the route does not exist.
    const cli = await call(new URL('/api/cli', server.url).href, json({ argv: ['runs'] }));
    expect(cli.status).toBe(404);
  }, 60_000);

  it('says migrate and wake have nothing to do (serve migrated the folder and hosts the wake)', async () => {
    const migrated = await run(['migrate', '--data', data], env);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toContain(`serve (pid ${server.child.pid}) holds`);
    const wake = await run(['wake', '--once', '--data', data], env);
    expect(wake.code, wake.stderr).toBe(0);
    expect(wake.stdout).toBe(
      `nothing to wake: serve (pid ${server.child.pid}) holds ${data} and resumes its answered runs itself\n`,
    );
  }, 60_000);

  it('chats through serve with the prompts answered here, as chat does without a server', async () => {
    // An answer over the size limit is refused at the prompt and asked again (as by `answer`);
    // the last question is left waiting at the end of input: the resume line is printed too.
    const input = `Plan me a trip\n2\n${'x'.repeat(1024 * 1024)}\n5\nyes\nPlan again\n`;
    const chat = (folder: string) =>
      runInProcess(['chat', '--session', 'c', '--data', folder], { env, input });
    const alone = dataDir();
    const [local, hosted] = await Promise.all([chat(alone), chat(data)]);
    expect(hosted.code, hosted.stderr).toBe(0);
    expect(hosted.stdout).toContain('Booked: Kyoto, 5 days.');
    expect(hosted.stdout).toContain('the question waits; answer it later with:');
    expect(hosted.stdout).toContain('over the limit of 16,384 characters');
    expect(same(hosted.stdout, data)).toBe(same(local.stdout, alone));
    expect(same(hosted.stderr, data)).toBe(
      `via serve (pid ${server.child.pid})\n${same(local.stderr, alone)}`,
    );
    // The session is serve's: resumed through it, its waiting question is asked again.
    const resumed = await runInProcess(['chat', '--session', 'c', '--resume', '--data', data], {
      env,
      input: '/quit\n',
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('? Where would you like to go?');
  }, 120_000);

  // Last: once an operator exists, the API takes keys only.
  it('manages operators and audits through the socket, recording its commands as the OS user via cli', async () => {
    const added = await run(
      ['operators', 'add', 'ada', '--role', 'admin', '--json', '--data', data],
      env,
    );
    expect(added.code, added.stderr).toBe(0);
    const key = added.events.find((e) => e.type === 'operator-added')?.key as string;
    // As the real binary: the other commands run in the tests' process.
    const listed = await runCli(['operators', 'list', '--json', '--data', data], {
      env: { RUNNER_TOKEN: '', ...env },
    });
    expect(listed.stderr).toBe(`{"type":"via-serve","pid":${server.child.pid}}\n`);
    expect(listed.events).toMatchObject([{ type: 'operator', name: 'ada' }]);
    // The waiting question of the API's run, answered by this terminal's user.
    const started = await run(['paused-states', 'list', '--json', '--data', data], env);
    const token = started.events.find((e) => e.conversationId === 'api-stream')?.token as string;
    const answered = await run(['answer', token, '--option', '1', '--data', data], env);
    expect(answered.code, answered.stderr).toBe(0);
    const audit = await run(
      ['audit', '--conversation', 'api-stream', '--json', '--data', data],
      env,
    );
    expect(audit.code, audit.stderr).toBe(0);
    expect(audit.events.find((e) => e.kind === 'question-answered')).toMatchObject({
      data: { by: userInfo().username, channel: 'cli' },
    });
    const verified = await run(['audit', 'verify', '--data', data], env);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toContain('no tampering found');
    // The answered question's token says who answered it, and when (409, as a second answer).
    const gone = await call(new URL(`/api/pauses/${token}`, server.url).href, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(gone.status).toBe(409);
    expect(gone.body.error).toMatchObject({
      code: 'already_answered',
      answered: [{ token, answeredBy: userInfo().username }],
    });
  }, 120_000);

  // Last of all: it stops the file's serve.
  it('a chat waiting at a prompt when serve stops leaves its question waiting and says how to resume it', async () => {
    const chat = startCli(['chat', '--session', 'stopped', '--data', data], { env });
    chat.stdin?.write('Plan me a trip\n');
    await waitForOutput(chat, '? Where would you like to go?');
    expect(await server.stop()).toBe(0);
    const ended = await finished(chat);
    expect(ended.code, ended.stderr).toBe(0);
    expect(ended.stdout).toContain('the question waits; answer it later with: ');
    expect(ended.stdout).toContain('chat --resume --session stopped');
  }, 60_000);
});
