import { spawnSync } from 'node:child_process';
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, dataDirs, json, run, type Served, serve, until } from './serve-harness.js';

/** A GET over the data folder's socket. */
function overSocket(socketPath: string, at: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: at }, (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const dataDir = dataDirs();
const env = { RUNNER_MODEL: 'scripted:trip' };

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
    const socketList = await overSocket(
      path.join(data, 'serve.sock'),
      '/api/runs?conversation=api',
    );
    expect(socketList.status).toBe(200);
    expect(JSON.parse(socketList.body).runs[0].runId).toBe(runId);
    // Running commands is the socket's alone: over TCP the route does not exist.
    const cli = await call(new URL('/api/cli', server.url).href, json({ argv: ['runs'] }));
    expect(cli.status).toBe(404);
  }, 60_000);

  it('says migrate has nothing to do, and keeps wake out (serve hosts it)', async () => {
    const migrated = await run(['migrate', '--data', data], env);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toContain(`serve (pid ${server.child.pid}) holds`);
    const wake = await run(['wake', '--once', '--data', data], env);
    expect(wake.code).toBe(4);
    expect(wake.stderr).toContain('in use by `runner serve`');
  }, 60_000);
});
