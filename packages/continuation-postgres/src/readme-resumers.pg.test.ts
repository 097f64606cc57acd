import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, serverForTests, type TestDatabase } from '@internal/pg-test';
import { createSuspension } from '@x/continuation';
import { assistantMessage, textOf, userMessage } from '@x/wire';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ContinuationDatabase,
  migrate,
  PostgresContinuationStore,
  PostgresRunQueue,
} from './index.js';

const serverUrl = await serverForTests();
const fixture = fileURLToPath(new URL('../test/fixtures/readme-resumer.mjs', import.meta.url));

/**
 * A stand-in for the Messages API that counts its calls and holds each one until a second
 * arrives (or a second passes), so that two resumers that both reach the model both call it.
 */
async function startModel(): Promise<{ url: string; calls: () => number; close(): Promise<void> }> {
  let calls = 0;
  const held: Array<() => void> = [];
  const reply = (res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `msg_${calls}`,
        type: 'message',
        role: 'assistant',
        model: 'scripted',
        content: [{ type: 'text', text: 'Deployed.' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      }),
    );
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      calls++;
      held.push(() => reply(res));
      const releaseAll = () => {
        for (const release of held.splice(0)) release();
      };
      if (held.length >= 2) releaseAll();
      else setTimeout(releaseAll, 1000);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls: () => calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Starts a resumer process and resolves once it is ready to resume. */
async function startResumer(
  args: string[],
): Promise<{ child: ChildProcess; out: Promise<string> }> {
  const child = spawn(process.execPath, [fixture, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const outLines: string[] = [];
  let ready: () => void = () => {};
  const isReady = new Promise<void>((resolve) => {
    ready = resolve;
  });
  lines.on('line', (line) => (line === 'ready' ? ready() : outLines.push(line)));
  const out = once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`a resumer exited with ${code}`);
    return outLines.join('\n');
  });
  await Promise.race([isReady, out]);
  return { child, out };
}

/** Starts two resumers, lets them go together, and returns how many model calls each made. */
async function twoResumers(args: string[]): Promise<number[]> {
  const resumers = await Promise.all([startResumer(args), startResumer(args)]);
  for (const { child } of resumers) child.stdin?.write('go\n');
  const outputs = await Promise.all(resumers.map(({ out }) => out));
  return outputs.map((o) => (JSON.parse(o) as { resumed: number }).resumed);
}

// Issue 49: the plain store pattern of the README resumes in every process that lists the
// interaction, while the README's RunWorker example resumes once, whoever claims first.
describe.skipIf(serverUrl === undefined)('two resumers of the README examples at once', () => {
  let database: TestDatabase;
  let client: postgres.Sql;
  let db: ContinuationDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(serverUrl, 'x_readme_resumers');
    client = postgres(database.url, { max: 2, onnotice: () => {} });
    db = drizzle({ client });
    await migrate(db);
  });
  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });

  const assistant = assistantMessage({
    type: 'tool_use',
    id: 'toolu_1',
    name: 'ask_user',
    input: { question: 'Deploy now?' },
  });
  const suspension = (runId: string, interactionId: string) =>
    createSuspension({
      interactionId,
      toolUseId: 'toolu_1',
      assistant,
      messages: [userMessage('Nightly deploy'), assistant],
      runId,
    });

  it('through RunWorker (the run queue claim): one model call, the run completed once', async () => {
    const model = await startModel();
    try {
      const runId = `run-${randomUUID()}`;
      const token = `ask-${randomUUID()}`;
      await db.transaction(async (tx) => {
        await new PostgresContinuationStore(tx).save(suspension(runId, token));
        const queue = new PostgresRunQueue(tx);
        await queue.create({
          runId,
          conversationId: runId,
          status: 'waiting',
          interactionId: token,
        });
        await queue.markReady(token, { content: 'yes' });
      });
      const resumed = await twoResumers(['worker', database.url, model.url, runId]);
      expect(model.calls()).toBe(1);
      expect(resumed.sort()).toEqual([0, 1]);
      const run = await new PostgresRunQueue(db).get(runId);
      expect(run?.status).toBe('completed');
      const transcript = await new PostgresRunQueue(db).transcript(runId);
      expect(transcript?.filter((m) => textOf(m) === 'Deployed.')).toHaveLength(1);
    } finally {
      await model.close();
    }
  });

  it('through the plain store pattern: both processes call the model (what it does not guarantee)', async () => {
    const model = await startModel();
    try {
      const runId = `run-${randomUUID()}`;
      await new PostgresContinuationStore(db).save(suspension(runId, `ask-${randomUUID()}`));
      const resumed = await twoResumers(['plain', database.url, model.url, runId]);
      expect(model.calls()).toBe(2);
      expect(resumed).toEqual([1, 1]);
    } finally {
      await model.close();
    }
  });
});
